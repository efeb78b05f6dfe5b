import CBenchFloor
import Glibc

/// The floor's work queue, for the `perform` wake and the throughput scenario: CBenchFloor's
/// queue.c — a C consumer thread asleep in `epoll_wait` on an eventfd, posters appending
/// {function pointer, context} to a mutex-guarded array that the consumer swaps out whole, the
/// eventfd written only when the consumer announced it sleeps on an empty array.
final class FloorQueue: Sendable {
    // Owned by this object: started in `init`, freed in `stop` (posting is thread-safe).
    nonisolated(unsafe) private let queue: OpaquePointer

    init() throws {
        guard let queue = cbench_floor_queue_start() else {
            throw FloorError(what: "the floor's queue", code: errno)
        }
        self.queue = queue
    }

    /// Posts `function(context)` once.
    @inline(__always)
    func post(_ function: cbench_floor_fn, _ context: UnsafeMutableRawPointer?) {
        cbench_floor_queue_post(queue, function, context)
    }

    /// Posts `function(context)` `count` times from C (a C poster's loop).
    func post(_ function: cbench_floor_fn, _ context: UnsafeMutableRawPointer?, count: Int) {
        cbench_floor_queue_post_many(queue, function, context, count)
    }

    /// How many posts wrote the eventfd: one per sleep of the consumer that a post ended.
    var wakes: UInt64 { cbench_floor_queue_wakes(queue) }

    /// Runs what is queued, then ends and joins the consumer; call once, after the last post.
    func stop() { cbench_floor_queue_stop(queue) }
}

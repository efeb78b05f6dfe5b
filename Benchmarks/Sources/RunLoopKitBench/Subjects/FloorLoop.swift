import CBenchFloor
import Glibc

/// The wake floor's loop for the `signal` and `descriptor` wakes: a C thread asleep in
/// `epoll_wait` on one eventfd, calling a function pointer that marks the probe (CBenchFloor's
/// wake.c). A driver wakes it by writing `wakeDescriptor`.
final class FloorLoop: Sendable {
    let wakeDescriptor: Int32
    // Owned by this object: started in `init`, ended in `stop` (the C side is thread-safe).
    nonisolated(unsafe) private let loop: OpaquePointer
    private let probe: Probe

    /// `readFirst`: the handler reads the eventfd before it marks (a descriptor source's
    /// handler, whose work is the read); otherwise it marks, then resets the eventfd (a
    /// doorbell: a signalled source).
    init(probe: Probe, readFirst: Bool) throws {
        self.probe = probe
        guard
            let loop = cbench_floor_wake_loop_start(
                FloorMark.mark, Unmanaged.passUnretained(probe).toOpaque(), readFirst)
        else { throw FloorError(what: "the wake floor's loop", code: errno) }
        self.loop = loop
        wakeDescriptor = cbench_floor_wake_loop_descriptor(loop)
    }

    /// Ends the loop thread and joins it (the probe is no longer called after).
    func stop() {
        cbench_floor_wake_loop_stop(loop)
        withExtendedLifetime(probe) {}
    }
}

/// The floors' C function that marks a probe: its context is an unretained `Probe`.
enum FloorMark {
    static let mark: cbench_floor_fn = { context in
        Unmanaged<Probe>.fromOpaque(context!).takeUnretainedValue().mark()
    }
}

/// A floor that could not start (a descriptor or a thread refused).
struct FloorError: Error, CustomStringConvertible {
    let what: String
    let code: Int32
    var description: String { "\(what) could not start: errno \(code)" }
}

import NIOCore
import RunLoopKit

/// One task given to the adapter, as the block the loop runs: it knows when the loop drops it
/// unrun (the block, and this object with it, is released without running) and hands the
/// task on then, so that nothing given to the adapter is lost.
final class LoopJob: @unchecked Sendable {
    // @unchecked: `task` is taken on the thread that runs the block, which is also the thread
    // that releases it afterwards; a block that never runs is released once, by one thread.
    private var task: (@Sendable () -> Void)?
    private let dropped: AfterEnd
    private let onDrop: (@Sendable () -> Void)?

    /// - Parameters:
    ///   - task: the work.
    ///   - dropped: where the work goes if the loop drops it.
    ///   - onDrop: what to do instead of running `task` if the loop drops it; `nil` runs `task`
    ///     after the loop's end.
    init(_ task: @escaping @Sendable () -> Void, dropped: AfterEnd, onDrop: (@Sendable () -> Void)? = nil) {
        self.task = task
        self.dropped = dropped
        self.onDrop = onDrop
    }

    /// Runs the task on the loop's thread.
    func run() {
        let task = self.task.take()
        task?()
    }

    deinit {
        guard let task else { return }
        dropped.serve(onDrop ?? task)
    }
}

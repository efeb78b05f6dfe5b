import RunLoopKit

/// What the tool reports, kept on the main actor: every call runs on the main loop's thread.
@MainActor
final class Progress {
    private(set) var ticks = 0
    private var step = 0

    /// Counts one tick of the repeating timer.
    func tick() { ticks += 1 }

    /// Prints one numbered step, with whether it runs under the running main loop.
    func note(_ what: String) {
        step += 1
        let onMainLoop = Loop.current === Loop.main && Loop.main.currentMode != nil
        print("\(step). \(what)\(onMainLoop ? "" : " (not on the running main loop!)")")
    }
}

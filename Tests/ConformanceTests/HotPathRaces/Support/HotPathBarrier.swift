import RunLoopKit
import TestSupport

/// Holds each of `parties` threads in ``arrive()`` until all of them arrived, round after round.
final class HotPathBarrier: Sendable {
    private let parties: Int
    private let state = Lock<(arrived: Int, generation: Int)>((0, 0))

    init(parties: Int) { self.parties = parties }

    /// Waits until every party arrived; false if they did not within ``generousDeadline``.
    func arrive() -> Bool {
        let waitingFor: Int? = state.withLock { state in
            state.arrived += 1
            guard state.arrived == parties else { return state.generation }
            state.arrived = 0
            state.generation += 1
            return nil
        }
        guard let generation = waitingFor else { return true }
        return hotPathWait { state.withLock { $0.generation } != generation }
    }
}

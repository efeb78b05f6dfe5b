import RunLoopKit

/// The value of `task` if it finishes within `timeout`, `nil` if not (the task is then left
/// running): how a test awaits something that might never end without hanging itself, and
/// without holding a thread while it waits.
public func value<T: Sendable>(of task: Task<T, Never>, within timeout: Duration = generousDeadline) async -> T? {
    let answered = Lock<CheckedContinuation<T?, Never>?>(nil)
    return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        answered.withLock { $0 = continuation }
        let answer: @Sendable (T?) -> Void = { value in answered.withLock { $0.take() }?.resume(returning: value) }
        let timer = Task {
            // Cancelled once the value arrived: then it must not answer (the value has).
            if (try? await Task.sleep(for: timeout)) != nil { answer(nil) }
        }
        Task {
            let value = await task.value
            answer(value)
            timer.cancel()
        }
    }
}

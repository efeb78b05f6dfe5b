/// What a sequence's consumer finds before it waits on the loop: an element already queued (a
/// port's message), the sequence's end (a closed port), or nothing.
enum QueuedElement<Element> {
    case element(Element)
    case end
    case nothing
}

/// The `next()` that the loop-served async sequences share (``Loop/PortMessages`` and
/// ``Loop/DescriptorReadiness``): a cancelled task ends the sequence; what is queued is taken
/// first; otherwise the consumer waits on the loop (``SequenceWaiter``), whose source joins the
/// loop only meanwhile. A sequence that returned `nil` or threw stays finished.
struct SequenceIteration {
    private var finished = false

    /// The next element: from `queued`, or waited for through `waiter`; `nil` at the end.
    ///
    /// - Throws: ``LoopSequenceError`` when the loop stopped serving the sequence.
    mutating func next<Element: Sendable>(
        from waiter: SequenceWaiter<Element>, isolation actor: isolated (any Actor)?,
        queued: () -> QueuedElement<Element> = { .nothing }
    ) async throws(LoopSequenceError) -> Element? {
        guard !finished else { return nil }
        guard !Task.isCancelled else {
            finished = true
            return nil
        }
        switch queued() {
        case let .element(element):
            return element
        case .end:
            finished = true
            return nil
        case .nothing:
            break
        }
        switch await waiter.next(isolation: actor) {
        case let .success(element?):
            return element
        case .success(nil):
            finished = true
            return nil
        case let .failure(error):
            finished = true
            throw error
        }
    }
}

import RunLoopKit
import TestSupport
import Testing

/// Whether `loop` came to watch a waiting consumer's descriptor, within ``hangDeadline``.
///
/// A consumer's source joins the mode as the consumer starts waiting (its `onWaiting`); the
/// loop's thread watches the descriptor at its next pass, which may come later.
func loopWatchesWaitingConsumer(_ loop: Loop) async -> Bool {
    await eventually(within: hangDeadline) { loop.registeredDescriptorCount == 1 }
}

/// `loop`'s statistics, read on its thread (within `within`'s deadline).
///
/// A consumer is resumed from inside the callout that hands it an element, and that callout is
/// counted once it returns: read off the loop's thread, the count may not include it yet.
func statisticsOnLoopThread(
    _ loop: Loop, sourceLocation: SourceLocation = #_sourceLocation
) async throws -> Loop.Statistics {
    try await within(sourceLocation: sourceLocation) { try await loop.submit { loop.statistics } }
}

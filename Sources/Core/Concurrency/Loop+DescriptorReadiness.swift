import SystemPackage

extension Loop {
    /// The readiness of `fileDescriptor` as an async sequence this loop serves in `mode`.
    ///
    /// ```swift
    /// for try await readiness in loop.readiness(of: socket, for: .readable) {
    ///     if readiness.contains(.hangup) { break }
    ///     drain(socket)
    /// }
    /// ```
    ///
    /// Each `next()` watches the descriptor until the loop finds it ready, then returns what
    /// it reported. Readiness is level-triggered, so the sequence coalesces: it reports the
    /// descriptor as it is when the consumer asks, never a backlog (several writes to a pipe
    /// before `next()` make one element, `readable`). The descriptor is watched only while a
    /// `next()` waits, so a descriptor that stays ready costs the loop nothing while the
    /// consumer is busy; one left ready is reported again at once by the next `next()`.
    /// RunLoopKit never reads the descriptor: the consumer drains it.
    ///
    /// The sequence ends (`nil`) when the consuming task is cancelled. It throws
    /// ``LoopSequenceError/loopEnded`` when the loop's thread ends while the consumer waits,
    /// or before it waits, and ``LoopSequenceError/sourceInvalidated`` when the loop cannot
    /// watch the descriptor (closed behind its back). A loop that is not running `mode` does
    /// not serve the wait until it does. Close the descriptor only once the iteration ended.
    ///
    /// - Parameters:
    ///   - fileDescriptor: an open descriptor that supports polling (as for
    ///     ``Source/init(fileDescriptor:interest:order:handler:)-(Int32,_,_,_)``).
    ///   - interest: what to wait for; must not be empty.
    ///   - mode: the mode the source joins while a consumer waits.
    /// - Throws: ``ArgumentError`` naming `fileDescriptor` or `interest` when refused.
    public func readiness(
        of fileDescriptor: Int32, for interest: Interest = .readable, in mode: Mode = .default
    ) throws(ArgumentError) -> DescriptorReadiness {
        // The same checks as a descriptor source's, made once here.
        _ = try Source(fileDescriptor: fileDescriptor, interest: interest) { _ in }
        return DescriptorReadiness(fileDescriptor: fileDescriptor, interest: interest, loop: self, mode: mode)
    }

    /// The readiness of `fileDescriptor` (a swift-system `FileDescriptor`) as an async
    /// sequence; the same as the method that takes an `Int32`, given
    /// `fileDescriptor.rawValue`.
    ///
    /// - Throws: ``ArgumentError`` naming `fileDescriptor` or `interest` when refused.
    public func readiness(
        of fileDescriptor: FileDescriptor, for interest: Interest = .readable, in mode: Mode = .default
    ) throws(ArgumentError) -> DescriptorReadiness {
        try readiness(of: fileDescriptor.rawValue, for: interest, in: mode)
    }

    /// A descriptor's readiness as an async sequence a loop serves: see
    /// ``Loop/readiness(of:for:in:)-(Int32,_,_)``.
    public struct DescriptorReadiness: AsyncSequence, Sendable {
        /// What the descriptor reported.
        public typealias Element = Readiness
        /// Thrown when the loop stops serving the sequence while its consumer waits.
        public typealias Failure = LoopSequenceError

        let fileDescriptor: Int32
        let interest: Interest
        let loop: Loop
        let mode: Mode
        /// Called each time a `next()` starts waiting on the loop (its source joined the
        /// mode): for tests that act while a consumer waits.
        package var onWaiting: (@Sendable () -> Void)?

        /// Makes an iterator; its source joins the loop only while its `next()` waits.
        public func makeAsyncIterator() -> Iterator {
            Iterator(
                watcher: DescriptorWatcher(
                    fileDescriptor: fileDescriptor, interest: interest, loop: loop, mode: mode, onWaiting: onWaiting))
        }

        /// Reports the descriptor's readiness to one consumer. Not `Sendable`: one task
        /// iterates it.
        public struct Iterator: AsyncIteratorProtocol {
            /// What the descriptor reported.
            public typealias Element = Readiness
            /// Thrown when the loop stops serving the sequence while its consumer waits.
            public typealias Failure = LoopSequenceError

            let watcher: DescriptorWatcher
            var iteration = SequenceIteration()

            /// Waits until the loop finds the descriptor ready and returns what it reported;
            /// `nil` once the task was cancelled.
            ///
            /// - Throws: ``LoopSequenceError`` when the loop stopped serving the sequence.
            public mutating func next() async throws(LoopSequenceError) -> Readiness? {
                try await next(isolation: nil)
            }

            /// Waits until the loop finds the descriptor ready and returns what it reported;
            /// `nil` once the task was cancelled.
            ///
            /// - Parameter actor: the caller's isolation, kept while waiting.
            /// - Throws: ``LoopSequenceError`` when the loop stopped serving the sequence.
            public mutating func next(
                isolation actor: isolated (any Actor)?
            ) async throws(LoopSequenceError) -> Readiness? {
                try await iteration.next(from: watcher.waiter, isolation: actor)
            }
        }
    }

    /// An iterator's descriptor source and the wait it serves; the iterator's last copy going
    /// away invalidates the source.
    final class DescriptorWatcher: Sendable {
        let waiter: SequenceWaiter<Readiness>
        private let source: Source

        init(
            fileDescriptor: Int32, interest: Interest, loop: Loop, mode: Mode, onWaiting: (@Sendable () -> Void)?
        ) {
            let waiter = SequenceWaiter<Readiness>(loop: loop, mode: mode, onWaiting: onWaiting)
            self.waiter = waiter
            source = Source(
                version1: .descriptor(
                    fileDescriptor, interest, handler: { readiness in waiter.handOver { readiness } }),
                cancel: { loop, _ in waiter.sourceLeft(loop) })
            waiter.attach(source)
        }

        deinit { source.invalidate() }
    }
}

@available(*, unavailable, message: "one task iterates a sequence's iterator")
extension Loop.DescriptorReadiness.Iterator: Sendable {}

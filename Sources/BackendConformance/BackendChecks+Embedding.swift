import Glibc
import RunLoopCore

extension BackendConformance {
    /// What a host loop relies on when a backend offers a descriptor (`Backend.embedding`): it
    /// polls readable exactly when a zero-timeout wait would report something. A backend that
    /// offers none passes them once its answer gives a reason (see ``Check/skipReason(for:)``).
    static var embeddingChecks: [Check] {
        [
            Check(
                "an offered host descriptor polls readable after a wake from another thread",
                hostDescriptorReadableAfterWake, appliesTo: offersDescriptor),
            Check(
                "an offered host descriptor polls readable when a registered descriptor is ready after its preparation step",
                hostDescriptorReadableForReadyDescriptor, appliesTo: offersDescriptor),
            Check(
                "an offered host descriptor does not poll readable when idle, once a zero-timeout wait consumed its wake",
                hostDescriptorQuietWhenIdle, appliesTo: offersDescriptor),
        ]
    }

    /// `nil` when the backend offers a descriptor; otherwise why the embedding checks do not
    /// apply. An unsupported answer without a reason is a failure, not a skip.
    private static func offersDescriptor(_ backend: any Backend) throws -> String? {
        switch backend.embedding {
        case .descriptor: return nil
        case let .unsupported(reason):
            try expect(
                !reason.isEmpty, "an unsupported embedding to say why",
                observed: "EmbeddingSupport.unsupported with an empty reason")
            return "the \(backend.kind) backend offers no host descriptor: \(reason)"
        }
    }

    private static func hostDescriptorReadableAfterWake(_ context: Context) throws {
        let subject = try Subject(context)
        let descriptor = try hostDescriptor(of: subject)
        try prepare(subject)
        let waker = subject.backend.waker
        let polling = Gate()
        let helper = try Helper {
            _ = polling.wait(for: context.deadline)
            waker.wake()
        }
        defer { helper.join(within: context.deadline) }
        polling.open()
        // Most often the wake lands while this thread sleeps in poll(2): the case a host is in.
        try expect(
            pollsReadable(descriptor, within: context.deadline),
            "the host descriptor \(descriptor) to poll readable after a wake from another thread",
            observed: "it stayed quiet for \(context.deadline)")
        try subject.waitOnce(.zero)
        try prepare(subject)
        try expect(
            !pollsReadable(descriptor, within: .zero),
            "the zero-timeout wait that followed to consume the wake: the host descriptor quiet again",
            observed: "it still polled readable")
    }

    private static func hostDescriptorReadableForReadyDescriptor(_ context: Context) throws {
        let subject = try Subject(context)
        let descriptor = try hostDescriptor(of: subject)
        let pipe = try KitPipe()
        defer { pipe.close() }
        try subject.register(pipe.readEnd, 5, .readable)
        try prepare(subject)
        try expect(
            !pollsReadable(descriptor, within: .zero), "the host descriptor to be quiet while the pipe is empty",
            observed: "it polled readable with nothing ready")
        let polling = Gate()
        let helper = try Helper {
            _ = polling.wait(for: context.deadline)
            pipe.fill()
        }
        defer { helper.join(within: context.deadline) }
        polling.open()
        try expect(
            pollsReadable(descriptor, within: context.deadline),
            "the host descriptor \(descriptor) to poll readable once the registered pipe became readable",
            observed: "it stayed quiet for \(context.deadline)")
        try subject.waitForEvents("the zero-timeout wait that followed to report the pipe")
        try expect(subject.tokens == [5], "one event, token #5", observed: subject.events.listed)
        try subject.unregister(pipe.readEnd, 5)
    }

    private static func hostDescriptorQuietWhenIdle(_ context: Context) throws {
        let subject = try Subject(context)
        let descriptor = try hostDescriptor(of: subject)
        let pipe = try KitPipe()
        defer { pipe.close() }
        try subject.register(pipe.readEnd, 3, .readable)
        subject.backend.waker.wake()
        pipe.fill()
        try prepare(subject)
        try expect(
            pollsReadable(descriptor, within: context.deadline),
            "the host descriptor to poll readable with a wake posted and the pipe ready",
            observed: "it stayed quiet for \(context.deadline)")
        // A host's dispatch: the pipe is read, and a zero-timeout wait consumes what is left.
        _ = pipe.drain()
        // The wake and the pipe's event may come in two polls (io_uring reports a completion
        // per request): two, as a host dispatches again while its descriptor stays readable.
        for _ in 0..<2 { try subject.waitOnce(.zero) }
        try prepare(subject)
        try expect(
            !pollsReadable(descriptor, within: .zero),
            "the host descriptor to be quiet once the wake was consumed and the pipe read (else a host spins)",
            observed: "it polled readable with nothing to do")
        try subject.unregister(pipe.readEnd, 3)
    }

    // MARK: - Support

    private static func hostDescriptor(of subject: Subject) throws -> Int32 {
        guard case let .descriptor(descriptor, _) = subject.backend.embedding else {
            throw Mismatch(expected: "a host descriptor", observed: "\(subject.backend.embedding)")
        }
        return descriptor
    }

    private static func prepare(_ subject: Subject) throws {
        guard case let .descriptor(_, prepare?) = subject.backend.embedding else { return }
        do {
            try prepare()
        } catch {
            throw Mismatch(expected: "the host descriptor's preparation step to succeed", observed: "it threw \(error)")
        }
    }

    /// Whether `descriptor` polls readable within `limit` (`.zero`: now), as a host would see it.
    private static func pollsReadable(_ descriptor: Int32, within limit: Duration) -> Bool {
        let end = ContinuousClock.now + limit
        while true {
            let left = max(.zero, end - ContinuousClock.now)
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            // Rounded up: never give up before the limit.
            let (seconds, attoseconds) = left.components
            let milliseconds = Int32(
                clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
            let result = poll(&entry, 1, milliseconds)
            if result > 0 { return entry.revents & Int16(POLLIN) != 0 }
            // An interrupted poll (a signal) polls again for what is left.
            if result < 0, errno == EINTR { continue }
            if ContinuousClock.now >= end { return false }
        }
    }
}

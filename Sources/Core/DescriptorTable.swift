/// What a loop has asked its backend to watch: the version-1 sources of the mode it runs.
///
/// Each registration gets a fresh ``Token``. An event whose token is no longer registered (its
/// descriptor was unregistered, or closed and reused, within one batch) is stale and dropped
/// here, once, for every backend. Touched only on the loop's thread.
struct DescriptorTable {
    struct Registration {
        let descriptor: Int32
        let token: Token
        var interest: Interest
        /// The sources this registration serves, as they were when it was made.
        var sources: [Loop.Source]
    }

    private var byDescriptor: [Int32: Registration] = [:]
    private var byToken: [Token: Int32] = [:]
    /// The mode whose sources are registered.
    private(set) var mode: Loop.Mode?
    /// The dispatch main queue's descriptor, when it is watched, and its token.
    private(set) var mainQueue: (descriptor: Int32, token: Token)?

    /// Makes the backend watch exactly the descriptors of `sources`, the sources of `mode`.
    ///
    /// A descriptor whose set of sources is unchanged keeps its registration; otherwise it is
    /// registered afresh under a new token, so a descriptor closed and reused meanwhile is
    /// watched as the new file it now is. A failure to watch a descriptor is reported on
    /// standard error and that source is invalidated: RunLoopKit never leaves a source that
    /// silently cannot fire.
    mutating func sync(_ sources: [Loop.Source], mode: Loop.Mode, mainQueue mainQueueDescriptor: Int32?, with backend: any Backend) {
        self.mode = mode
        syncMainQueue(mainQueueDescriptor, with: backend)
        var wanted: [Int32: (interest: Interest, sources: [Loop.Source])] = [:]
        for source in sources {
            guard let (fd, interest) = source.watchedDescriptor else { continue }
            wanted[fd, default: ([], [])].interest.formUnion(interest)
            wanted[fd, default: ([], [])].sources.append(source)
        }
        for (fd, registration) in byDescriptor where wanted[fd] == nil {
            unregister(registration, from: backend)
        }
        for (fd, want) in wanted {
            if let old = byDescriptor[fd] {
                if old.interest == want.interest, old.sources.elementsEqual(want.sources, by: ===) { continue }
                unregister(old, from: backend)
            }
            let token = Token(rawValue: Sequence.next())
            do {
                try backend.register(fd, token: token, interest: want.interest)
                byDescriptor[fd] = Registration(descriptor: fd, token: token, interest: want.interest, sources: want.sources)
                byToken[token] = fd
            } catch {
                reportUnwatchable(want.sources, error: error)
            }
        }
    }

    /// Watches the dispatch main queue's eventfd (main loop, common modes, outside a
    /// main-queue drain), or stops watching it.
    private mutating func syncMainQueue(_ descriptor: Int32?, with backend: any Backend) {
        guard mainQueue?.descriptor != descriptor else { return }
        if let (fd, token) = mainQueue {
            try? backend.unregister(fd, token: token)
            mainQueue = nil
        }
        guard let descriptor else { return }
        let token = Token(rawValue: Sequence.next())
        do {
            try backend.register(descriptor, token: token, interest: .readable)
            mainQueue = (descriptor, token)
        } catch {
            reportToStandardError("RunLoopKit: cannot watch the dispatch main queue: \(error)")
        }
    }

    /// Whether a ready event is the dispatch main queue's.
    func isMainQueue(_ token: Token) -> Bool { mainQueue?.token == token }

    /// The sources a ready event is for, or `nil` for a stale event.
    func sources(for token: Token) -> [Loop.Source]? {
        guard let fd = byToken[token], let registration = byDescriptor[fd], registration.token == token else { return nil }
        return registration.sources
    }

    /// Unregisters everything (the loop is being torn down).
    mutating func removeAll(from backend: any Backend) {
        for registration in byDescriptor.values { unregister(registration, from: backend) }
        syncMainQueue(nil, with: backend)
        mode = nil
    }

    private mutating func unregister(_ registration: Registration, from backend: any Backend) {
        byDescriptor[registration.descriptor] = nil
        byToken[registration.token] = nil
        // A descriptor the user already closed is gone from the backend's set: not an error.
        try? backend.unregister(registration.descriptor, token: registration.token)
    }

    private func reportUnwatchable(_ sources: [Loop.Source], error: SystemError) {
        for source in sources {
            reportToStandardError("RunLoopKit: cannot watch \(source): \(error); the source is invalidated")
            source.invalidate()
        }
    }
}

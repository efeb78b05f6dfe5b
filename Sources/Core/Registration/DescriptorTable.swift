/// What a loop has asked its backend to watch: the version-1 sources of the mode it runs.
///
/// Each registration gets a fresh ``Token``. An event whose token is no longer registered (its
/// descriptor was unregistered, or closed and reused, within one batch) is stale and dropped
/// here, once, for every backend (D8). Only its owner, the loop's ``Registrar``, touches it,
/// with its lock held.
struct DescriptorTable {
    struct Registration {
        let descriptor: Int32
        let token: Token
        /// The mode's sources on this descriptor when the registration was made.
        let members: [Loop.Source]
        /// Those of ``members`` that are watched: the ones whose descriptor still names the
        /// file they were made for.
        let sources: [Loop.Source]
    }

    private var byDescriptor: [Int32: Registration] = [:]
    private var byToken: [Token: Int32] = [:]
    /// The mode whose sources are registered.
    private(set) var mode: Loop.Mode?
    /// The dispatch main queue's descriptor, when it is watched, and its token.
    private(set) var mainQueue: (descriptor: Int32, token: Token)?

    /// How many descriptors are registered for sources.
    var count: Int { byDescriptor.count }

    /// What changed in the sources a sync brings the backend in line with.
    enum Changes {
        /// The mode's descriptors, all of them: registrations for any other descriptor go.
        case all([Int32: [Loop.Source]])
        /// The descriptors of the registered mode whose sources changed, with their sources
        /// now (none: the descriptor leaves); the others stay as they are.
        case some([(Int32, [Loop.Source])])
    }

    /// Makes the backend watch the descriptors of `mode`'s version-1 sources, as `changes`
    /// says they are now.
    ///
    /// A descriptor whose list of sources is unchanged keeps its registration (a descriptor
    /// shared by two modes is not registered again when the loop switches between them);
    /// otherwise it is registered afresh under a new token. Whenever a descriptor is
    /// registered, the file it names now is compared with the file each of its sources was
    /// made for: a source whose descriptor was closed and reused behind its back is never
    /// watched (its handler would otherwise hear about a stranger's file), even when it was
    /// watched before and another source on the reused number is what made the registration
    /// change. A source that cannot be watched is returned, so that RunLoopKit never leaves a
    /// source that silently cannot fire.
    mutating func sync(
        _ changes: Changes, mode: Loop.Mode, mainQueue mainQueueDescriptor: Int32?, with backend: any Backend
    ) -> [Unwatchable] {
        self.mode = mode
        var unwatchable: [Unwatchable] = []
        syncMainQueue(mainQueueDescriptor, with: backend, unwatchable: &unwatchable)
        switch changes {
        case let .all(wanted):
            var kept = 0
            for (fd, candidates) in wanted where sync(fd, to: candidates, with: backend, unwatchable: &unwatchable) {
                kept += 1
            }
            // Only when some registration is not for a wanted descriptor is it looked for:
            // switching between modes that watch the same descriptors costs one lookup each.
            if byDescriptor.count > kept {
                // [D7] A descriptor no source of the mode needs leaves the backend now.
                for (fd, registration) in byDescriptor where wanted[fd] == nil {
                    unregister(registration, from: backend)
                }
            }
        case let .some(changed):
            for (fd, candidates) in changed {
                _ = sync(fd, to: candidates, with: backend, unwatchable: &unwatchable)
            }
        }
        return unwatchable
    }

    /// Registers `fd` for `candidates`, its sources now, unless it is registered for them
    /// already; unregisters it when there are none. Returns whether `fd` is registered.
    private mutating func sync(
        _ fd: Int32, to candidates: [Loop.Source], with backend: any Backend, unwatchable: inout [Unwatchable]
    ) -> Bool {
        if let index = byDescriptor.index(forKey: fd) {
            if byDescriptor.values[index].members.elementsEqual(candidates, by: ===) { return true }
            unregister(byDescriptor.values[index], from: backend)
        }
        // [D7] No source left on the descriptor: it has left the backend, above.
        guard !candidates.isEmpty else { return false }
        // [D8] A source whose descriptor was closed and reused behind its back is never
        // watched: the file the number names now must be the one it was made for.
        let now = FileIdentity(of: fd)
        var watched: [Loop.Source] = []
        var interest: Interest = []
        for source in candidates {
            guard now == source.fileIdentity, let (_, wants) = source.watchedDescriptor else {
                unwatchable.append(.closed(source, descriptor: fd, nowNames: now))
                continue
            }
            watched.append(source)
            // [D6] Two sources on one descriptor share its registration; each hears of it.
            interest.formUnion(wants)
        }
        guard !watched.isEmpty else { return false }
        // [D8] A fresh token: events of an earlier registration of this number are stale.
        let token = Token(rawValue: Ordinal.next())
        do {
            try backend.register(fd, token: token, interest: interest)
            byDescriptor[fd] = Registration(descriptor: fd, token: token, members: candidates, sources: watched)
            byToken[token] = fd
            return true
        } catch {
            for source in watched {
                unwatchable.append(
                    Unwatchable(
                        source: source, descriptor: fd, reason: "cannot watch descriptor \(fd): \(error)", error: error)
                )
            }
            return false
        }
    }

    /// Watches the dispatch main queue's eventfd (main loop, common modes, outside a
    /// main-queue drain), or stops watching it. A failure to watch it is added to
    /// `unwatchable`, for the caller to report once no lock is held.
    private mutating func syncMainQueue(
        _ descriptor: Int32?, with backend: any Backend, unwatchable: inout [Unwatchable]
    ) {
        guard mainQueue?.descriptor != descriptor else { return }
        if let (fd, token) = mainQueue {
            try? backend.unregister(fd, token: token)
            mainQueue = nil
        }
        guard let descriptor else { return }
        let token = Token(rawValue: Ordinal.next())
        do {
            try backend.register(descriptor, token: token, interest: .readable)
            mainQueue = (descriptor, token)
        } catch {
            unwatchable.append(
                Unwatchable(
                    source: nil, descriptor: descriptor, reason: "cannot watch the dispatch main queue: \(error)",
                    error: error))
        }
    }

    /// Whether a ready event is the dispatch main queue's.
    func isMainQueue(_ token: Token) -> Bool { mainQueue?.token == token }

    /// The sources a ready event is for, or `nil` for a stale event ([D8]: its registration
    /// ended, even when the descriptor's number is registered again).
    func sources(for token: Token) -> [Loop.Source]? {
        guard let fd = byToken[token], let registration = byDescriptor[fd], registration.token == token else {
            return nil
        }
        return registration.sources
    }

    /// Unregisters everything (the loop is being torn down).
    mutating func removeAll(from backend: any Backend) {
        for registration in byDescriptor.values { unregister(registration, from: backend) }
        // Stopping watching reports nothing: there is nothing to add to.
        var none: [Unwatchable] = []
        syncMainQueue(nil, with: backend, unwatchable: &none)
        mode = nil
    }

    private mutating func unregister(_ registration: Registration, from backend: any Backend) {
        byDescriptor[registration.descriptor] = nil
        byToken[registration.token] = nil
        // A descriptor the user already closed is gone from the backend's set: not an error.
        // [D8] Its token is forgotten with it: an event still carrying it is stale.
        try? backend.unregister(registration.descriptor, token: registration.token)
    }
}

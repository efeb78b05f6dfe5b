import SystemPackage

extension Backend {
    /// Starts watching `descriptor` for `interest`; the same as
    /// ``register(_:token:interest:)`` with `descriptor.rawValue`.
    ///
    /// - Throws: ``SystemError``, as ``register(_:token:interest:)`` does.
    public func register(_ descriptor: FileDescriptor, token: Token, interest: Interest) throws(SystemError) {
        try register(descriptor.rawValue, token: token, interest: interest)
    }

    /// Stops watching `descriptor`; the same as ``unregister(_:token:)`` with
    /// `descriptor.rawValue`.
    ///
    /// - Throws: ``SystemError``, as ``unregister(_:token:)`` does.
    public func unregister(_ descriptor: FileDescriptor, token: Token) throws(SystemError) {
        try unregister(descriptor.rawValue, token: token)
    }
}

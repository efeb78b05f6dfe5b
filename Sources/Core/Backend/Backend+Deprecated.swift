import SystemPackage

// Spellings from before the backend protocol was cut back to its seven requirements, kept so
// that code calling them still compiles (with a warning that says what to use instead).
extension Backend {
    /// Unregisters `descriptor`, then registers it with `interest` and `token`.
    @available(
        *, deprecated,
        message:
            "modify left the Backend protocol: call unregister(_:token:), then register(_:token:interest:) with the new token, as Core does"
    )
    public func modify(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError) {
        try unregister(descriptor, token: token)
        try register(descriptor, token: token, interest: interest)
    }

    /// Unregisters `descriptor`, then registers it with `interest` and `token`.
    @available(
        *, deprecated,
        message:
            "modify left the Backend protocol: call unregister(_:token:), then register(_:token:interest:) with the new token, as Core does"
    )
    public func modify(_ descriptor: FileDescriptor, token: Token, interest: Interest) throws(SystemError) {
        try unregister(descriptor.rawValue, token: token)
        try register(descriptor.rawValue, token: token, interest: interest)
    }

    /// Whether ``ownSources`` is ``OwnSourceServing/passPhase(_:)``.
    @available(*, deprecated, message: "read ownSources, which also says how the backend serves them")
    public var servesOwnSources: Bool {
        if case .passPhase = ownSources { true } else { false }
    }

    /// Runs the preparation step of ``embedding``'s descriptor, if it has one.
    @available(
        *, deprecated, message: "the step is EmbeddingSupport.descriptor's prepare, which Loop.prepareForHost(in:) runs"
    )
    public func prepareForHostWait() throws(SystemError) {
        if case let .descriptor(_, prepare?) = embedding { try prepare() }
    }
}

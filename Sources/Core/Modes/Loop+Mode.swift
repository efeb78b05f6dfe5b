extension Loop {
    /// The name of a run-loop mode.
    ///
    /// A loop runs in exactly one mode at a time and only serves the items of that mode. Modes
    /// come into existence when an item is added to them, a block is queued for them, or they
    /// are made common. ``common`` is not a mode but stands for the set of common modes.
    public struct Mode: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The mode's number in the process's table of mode names (``ModeNames``): equal
        /// names, equal numbers. A loop looks modes up on every pass and every block it runs,
        /// so a mode is compared, hashed and copied as one integer, never as its name.
        @usableFromInline let index: Int

        /// Creates a mode with the given name.
        ///
        /// Names are interned: the first mode made with a name costs a look-up under a
        /// process-wide lock; keep a mode you use often in a `static let`.
        public init(_ name: String) {
            index = ModeNames.index(of: name)
        }

        /// Creates a mode from a string literal.
        public init(stringLiteral name: String) { self.init(name) }

        @usableFromInline init(index: Int) { self.index = index }

        /// The mode's name.
        public var name: String { ModeNames.name(at: index) }

        /// Whether two modes have the same name.
        public static func == (a: Mode, b: Mode) -> Bool { a.index == b.index }

        /// Hashes the mode by its number (equal names, equal numbers).
        public func hash(into hasher: inout Hasher) {
            hasher.combine(index)
        }

        /// The mode every loop has; initially the only common mode.
        @inlinable public static var `default`: Mode { Mode(index: 0) } // ModeNames.defaultIndex

        /// The pseudo-mode that stands for every common mode, now and later.
        ///
        /// Adding an item to `common` adds it to each common mode; running `common` is a usage
        /// error that returns ``RunResult/finished`` at once.
        @inlinable public static var common: Mode { Mode(index: 1) } // ModeNames.commonIndex

        /// The mode's name.
        public var description: String { name }
    }
}

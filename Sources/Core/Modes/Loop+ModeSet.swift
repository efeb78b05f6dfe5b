extension Loop {
    /// The modes a block may run in, for ``Loop/perform(in:_:)-(Loop.ModeSet,_)`` and
    /// ``Loop/perform(after:in:_:)-(_,Loop.ModeSet,_)``: written as an array literal (`[.default]`,
    /// `[.default, tracking]`) or made from any sequence of modes.
    ///
    /// A bit per mode for the process's first 64 modes (a mode is a number; see ``Mode``),
    /// so that building one at each call, as `perform(in: [.default])` does, neither
    /// allocates nor hashes; modes beyond those are kept in a set.
    public struct ModeSet: Sendable, Hashable, ExpressibleByArrayLiteral, CustomStringConvertible {
        /// Bit `n` stands for the mode numbered `n`.
        @usableFromInline var mask: UInt64
        /// Modes numbered 64 and above.
        @usableFromInline var others: Set<Mode>

        /// The modes of the literal.
        @inlinable
        public init(arrayLiteral modes: Mode...) {
            self.init(modes)
        }

        /// The modes of `modes`.
        @inlinable
        public init(_ modes: some Sequence<Mode>) {
            var mask: UInt64 = 0
            var others: Set<Mode> = []
            for mode in modes {
                if mode.index < 64 {
                    mask |= 1 << UInt64(mode.index)
                } else {
                    others.insert(mode)
                }
            }
            self.mask = mask
            self.others = others
        }

        /// Whether there is no mode.
        public var isEmpty: Bool { mask == 0 && others.isEmpty }

        /// Whether `mode` is one of the modes.
        public func contains(_ mode: Mode) -> Bool {
            mode.index < 64 ? mask & (1 << UInt64(mode.index)) != 0 : others.contains(mode)
        }

        /// The modes, in the order of their numbers (the order they were first named in).
        var modes: [Mode] {
            (0..<64).filter { mask & (1 << UInt64($0)) != 0 }.map(Mode.init(index:))
                + others.sorted { $0.index < $1.index }
        }

        /// The modes' names in brackets, in the order of their numbers.
        public var description: String { "[" + modes.map(\.name).joined(separator: ", ") + "]" }
    }
}

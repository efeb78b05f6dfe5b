extension Loop {
    /// The step of a pass a loop is in, as a ``StallMonitor`` reports it.
    ///
    /// Waiting is not a phase: a loop asleep in its backend is never stalled.
    public enum PassPhase: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// A run is starting: its ``Activity/entry`` observers.
        case entry = 1
        /// The ``Activity/beforeTimers`` observers.
        case beforeTimers
        /// The ``Activity/beforeSources`` observers.
        case beforeSources
        /// Running blocks queued by ``Loop/perform(_:)``.
        case blocks
        /// Performing signalled version-0 sources.
        case version0Sources
        /// Getting ready to wait: registering descriptors, deciding how long to sleep, and the
        /// ``Activity/beforeWaiting`` observers.
        case beforeWaiting
        /// Just after a wait (a sleep or a poll): the ``Activity/afterWaiting`` observers.
        case afterWaiting
        /// Firing due timers.
        case timers
        /// Handling ready version-1 sources (descriptors and ports).
        case version1Sources
        /// Draining `DispatchQueue.main` (the main loop only).
        case mainQueue
        /// A run is ending: its ``Activity/exit`` observers.
        case exit
        /// Running the callbacks of the backend's own sources (GLib's, on the GLib backend;
        /// see ``OwnSourcePhase/dispatchOwnSources()``).
        case backendSources

        /// The phase in words, as reports and the debug description print it.
        public var description: String {
            switch self {
            case .entry: "entry"
            case .beforeTimers: "beforeTimers"
            case .beforeSources: "beforeSources"
            case .blocks: "blocks"
            case .version0Sources: "version0Sources"
            case .beforeWaiting: "beforeWaiting"
            case .afterWaiting: "afterWaiting"
            case .timers: "timers"
            case .version1Sources: "version1Sources"
            case .mainQueue: "mainQueue"
            case .exit: "exit"
            case .backendSources: "backendSources"
            }
        }

        /// The phase in which observers of `activity` are called.
        init(notifying activity: Activity) {
            switch activity {
            case .entry: self = .entry
            case .beforeTimers: self = .beforeTimers
            case .beforeSources: self = .beforeSources
            case .beforeWaiting: self = .beforeWaiting
            case .afterWaiting: self = .afterWaiting
            default: self = .exit
            }
        }
    }
}

extension Loop {
    /// Says the loop is now in `phase`, in its own code (``PassInstruments/enter(_:)``).
    @inline(__always)
    func publish(_ phase: PassPhase) {
        instruments.enter(phase)
    }
}

extension Loop {
    /// Where in a pass the loop is, as the low byte of ``LoopProgress/word``.
    static func place(_ phase: PassPhase?, _ callout: CalloutKind? = nil) -> UInt8 {
        (phase?.rawValue ?? 0) | (callout.map { $0.rawValue << LoopProgress.phaseBits } ?? 0)
    }

    /// Whether every ``PassPhase`` and every ``CalloutKind`` fits its field of
    /// ``LoopProgress/word`` (checked as each loop is made, and by a test).
    package static var progressFieldsFit: Bool {
        progressField(PassPhase.self, fitsIn: LoopProgress.phaseBits)
            && progressField(CalloutKind.self, fitsIn: LoopProgress.calloutBits)
    }

    /// Whether each case of `Field` has a raw value other than 0 (which says "none") that fits
    /// in `bits` bits.
    package static func progressField<Field: CaseIterable & RawRepresentable>(
        _: Field.Type, fitsIn bits: Int
    ) -> Bool where Field.RawValue == UInt8 {
        Field.allCases.allSatisfy { $0.rawValue != 0 && Int($0.rawValue) < 1 << bits }
    }
}

import Glibc
import PropertyBased

/// Random programs, for PropertyBased: generation with the property checker's seeded random
/// generator (so a seed replays a program exactly), shrinking with ``ProgramShrinker``.
enum ProgramGenerator {
    /// 500 programs of 200 steps: 100,000 random steps. `RUNLOOPKIT_MODEL_STEPS` sets the total
    /// (the Thread Sanitizer run in CI uses fewer; a soak uses more).
    static let programs: Int = {
        guard let text = getenv("RUNLOOPKIT_MODEL_STEPS"), let steps = Int(String(cString: text)), steps > 0 else {
            return 500
        }
        return max(1, steps / stepsPerProgram)
    }()
    static let stepsPerProgram = 200

    /// The programs are checked in this many test cases, which Swift Testing runs side by side
    /// (each program has a fresh seed, as before): the same number of programs, on every CPU
    /// instead of one (``runOnCore(_:)`` admits one program per CPU at once).
    static let shards = 4

    /// The programs shard `shard` (0..<``shards``) checks: together, ``programs``.
    static func programs(inShard shard: Int) -> Int {
        programs / shards + (shard < programs % shards ? 1 : 0)
    }

    static let itemsPerKind = 3
    static let blockActionCount = 4

    static var generator: Generator<Program, ProgramShrinker> {
        Generator(run: { rng in make(using: &rng) }, shrink: { ProgramShrinker(program: $0) })
    }

    static func make(using rng: inout some RandomNumberGenerator) -> Program {
        // Swarm testing: each program favours some callout actions and leaves others out, which
        // reaches more corners than one fixed mix (a program where callouts mostly stop, say).
        let calloutWeights = Self.calloutWeights.map { kind, weight in
            (kind, kind == .none ? weight : weight * pick([(0, 1), (1, 2), (3, 1)], &rng))
        }
        return Program(
            sources: (0..<itemsPerKind).map { _ in
                .init(
                    order: .random(in: 0...2, using: &rng), actions: calloutActions(0...3, calloutWeights, using: &rng))
            },
            descriptors: (0..<itemsPerKind).map { index in
                var actions = calloutActions(0...3, calloutWeights, using: &rng)
                // A handler usually drains its descriptor at some call (level-triggered: one that
                // never does is handled in every pass until the step's callout budget stops it).
                if chance(0.8, &rng) {
                    actions.insert(
                        .setReadiness(descriptor: index, []), at: .random(in: 0...actions.count, using: &rng))
                }
                return .init(
                    interest: pick([(InterestName.readable, 6), (.writable, 2), (.both, 2)], &rng),
                    order: .random(in: 0...2, using: &rng), actions: actions)
            },
            timers: (0..<itemsPerKind).map { _ in
                .init(
                    fireAt: .random(in: 0...40, using: &rng),
                    interval: chance(0.6, &rng) ? .random(in: 2...20, using: &rng) : nil,
                    tolerance: tolerance(&rng),
                    order: .random(in: 0...2, using: &rng), actions: calloutActions(0...3, calloutWeights, using: &rng))
            },
            observers: (0..<itemsPerKind).map { _ in
                var activities = ActivityName.allCases.filter { _ in chance(0.35, &rng) }
                if activities.isEmpty { activities = [ActivityName.allCases.randomElement(using: &rng)!] }
                return .init(
                    activities: activities, repeats: chance(0.8, &rng), order: .random(in: 0...2, using: &rng),
                    actions: calloutActions(0...2, calloutWeights, using: &rng))
            },
            blockActions: (0..<blockActionCount).map { _ in action(calloutWeights, using: &rng) },
            steps: (0..<stepsPerProgram).map { _ in action(stepWeights, using: &rng) }
        )
    }

    private enum Kind {
        case none, add, remove, invalidate, signal, setFireInstant, setTolerance, setReadiness, perform, run, stop,
            wakeUp, addCommonMode, advanceClock
    }

    /// Steps build up state and run the loop; stop and wakeUp outside a run have no effect.
    private static let stepWeights: [(Kind, Int)] = [
        (.add, 20), (.remove, 5), (.invalidate, 2), (.signal, 12), (.setFireInstant, 7), (.setTolerance, 2),
        (.setReadiness, 6), (.perform, 10), (.run, 28), (.stop, 1), (.wakeUp, 1), (.addCommonMode, 2),
        (.advanceClock, 5),
    ]

    /// Callouts do the things that interleave with a run: nested runs, stop, wakeUp, signals.
    private static let calloutWeights: [(Kind, Int)] = [
        (.none, 10), (.add, 8), (.remove, 5), (.invalidate, 5), (.signal, 14), (.setFireInstant, 8),
        (.setTolerance, 2), (.setReadiness, 6), (.perform, 10), (.run, 10), (.stop, 8), (.wakeUp, 6),
        (.addCommonMode, 3), (.advanceClock, 6),
    ]

    private static func calloutActions(
        _ count: ClosedRange<Int>, _ calloutWeights: [(Kind, Int)], using rng: inout some RandomNumberGenerator
    ) -> [Action] {
        (0..<Int.random(in: count, using: &rng)).map { _ in action(calloutWeights, using: &rng) }
    }

    private static func action(_ weights: [(Kind, Int)], using rng: inout some RandomNumberGenerator) -> Action {
        switch pick(weights, &rng) {
        case .none: .none
        case .add: .add(item(&rng), mode(&rng))
        case .remove: .remove(item(&rng), mode(&rng))
        case .invalidate: .invalidate(item(&rng))
        case .signal:
            chance(0.1, &rng)
                ? .signalDescriptor(.random(in: 0..<itemsPerKind, using: &rng))
                : .signal(source: .random(in: 0..<itemsPerKind, using: &rng))
        case .setFireInstant:
            .setFireInstant(
                timer: .random(in: 0..<itemsPerKind, using: &rng), fromNow: .random(in: -10...30, using: &rng))
        case .setTolerance:
            .setTolerance(timer: .random(in: 0..<itemsPerKind, using: &rng), milliseconds: tolerance(&rng))
        case .setReadiness:
            .setReadiness(
                descriptor: .random(in: 0..<itemsPerKind, using: &rng),
                pick(
                    [
                        ([], 40), ([ReadinessName.readable], 30), ([.writable], 10), ([.readable, .writable], 8),
                        ([.readable, .hangup], 6), ([.hangup], 3), ([.error], 3),
                    ], &rng))
        case .perform: .perform(modes: blockModes(&rng), action: .random(in: 0..<blockActionCount, using: &rng))
        case .run:
            .run(
                pick([(ModeName.default, 45), (.a, 30), (.b, 22), (.common, 2)], &rng),
                timeout: pick([(0, 22), (-1, 3), (nil, 15), (Int.random(in: 1...30, using: &rng), 60)], &rng),
                returnAfterSourceHandled: chance(0.25, &rng))
        case .stop: .stop
        case .wakeUp: .wakeUp
        case .addCommonMode: .addCommonMode(pick([(ModeName.a, 45), (.b, 45), (.default, 5), (.common, 5)], &rng))
        case .advanceClock: .advanceClock(.random(in: 1...15, using: &rng))
        }
    }

    private static func item(_ rng: inout some RandomNumberGenerator) -> ItemRef {
        let index = Int.random(in: 0..<itemsPerKind, using: &rng)
        return pick(
            [(ItemRef.source(index), 4), (.descriptor(index), 3), (.timer(index), 3), (.observer(index), 3)], &rng)
    }

    /// Most timers are exact; a tolerance may exceed half the interval (Core clamps it, T10).
    private static func tolerance(_ rng: inout some RandomNumberGenerator) -> Int {
        chance(0.5, &rng) ? 0 : .random(in: 1...8, using: &rng)
    }

    private static func mode(_ rng: inout some RandomNumberGenerator) -> ModeName {
        pick([(ModeName.default, 35), (.a, 25), (.b, 15), (.common, 25)], &rng)
    }

    private static func blockModes(_ rng: inout some RandomNumberGenerator) -> Set<ModeName> {
        let any = Set(ModeName.allCases.filter { _ in chance(0.4, &rng) })
        return pick(
            [([ModeName.common], 35), ([.default], 15), ([.a], 15), ([.b], 10), (any.isEmpty ? [.a, .b] : any, 25)],
            &rng)
    }

    private static func chance(_ probability: Double, _ rng: inout some RandomNumberGenerator) -> Bool {
        Double.random(in: 0..<1, using: &rng) < probability
    }

    private static func pick<T>(_ options: [(T, Int)], _ rng: inout some RandomNumberGenerator) -> T {
        var roll = Int.random(in: 0..<options.reduce(0) { $0 + $1.1 }, using: &rng)
        for (option, weight) in options {
            if roll < weight { return option }
            roll -= weight
        }
        return options[options.count - 1].0
    }
}

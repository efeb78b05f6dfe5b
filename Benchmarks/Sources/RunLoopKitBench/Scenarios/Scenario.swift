/// The scenarios, selectable with `--scenarios`.
enum ScenarioName: String, CaseIterable, Sendable {
    case wake, timer, throughput, idle, coalescing
    case sleepCoalescing = "sleep-coalescing"
    case scale, pass
}

/// Sample counts and durations, from the command line; `--quick` scales them down.
struct Settings: Sendable {
    var seed: UInt64 = 0x5EED_2026
    var wakeWarmup = 1_000
    var wakeSamples = 20_000
    var timerSamples = 2_000
    var repeatingSeconds = 2.0
    var blocks = 1_000_000
    var passes = 1_000_000
    var idleSeconds = 2.0
    var coalescingSeconds = 2.0
    var coalescingTimers = 1_000
    var scaleTimers = 1_000_000
    var scaleDescriptors = 10_000
    var scaleDescriptorSamples = 2_000
    var scalePasses = 100_000
    var scaleSwitches = 100_000
    var rearms = 1_000_000
    var subjects: [Subject] = Subject.all
    /// Whether these are `--quick`'s sample counts (a main-subject child is told so).
    var isQuick = false
    /// Whether the wake measurements hold the CPU-idle latency at 0 µs (see `IdleLatency`).
    var shallowIdle = true

    static var quick: Settings {
        var settings = Settings()
        settings.wakeWarmup = 100
        settings.wakeSamples = 1_000
        settings.timerSamples = 200
        settings.repeatingSeconds = 0.5
        settings.blocks = 200_000
        settings.passes = 100_000
        settings.idleSeconds = 0.5
        settings.coalescingSeconds = 0.5
        settings.scaleTimers = 100_000
        settings.scaleDescriptorSamples = 300
        settings.scalePasses = 10_000
        settings.scaleSwitches = 10_000
        return settings
    }

    func wants(_ subject: Subject) -> Bool { subjects.contains(subject) }
}

/// The context every scenario runs in: settings, where results go, the progress line.
struct Context {
    let settings: Settings
    let results: Results
    let progress: Progress
    let idleLatency = IdleLatency()

    /// Runs `body` (a wake measurement) with the CPU-idle latency held at 0 µs, unless
    /// `--allow-deep-idle`; notes in the report which way it ran.
    func withShallowIdle(_ what: String, _ body: () -> Void) {
        guard settings.shallowIdle else {
            results.note("\(what): CPUs idled as deep as the machine lets them (--allow-deep-idle)")
            return body()
        }
        let (held, why) = idleLatency.hold()
        if held {
            results.note("\(what): ran with /dev/cpu_dma_latency held at 0 µs (idle CPUs poll instead of halting)")
        } else {
            progress.warn("\(why); \(what) will include the idle CPUs' exit latency")
            results.note("\(what): could not hold the idle latency (\(why)); figures include idle exit latency")
        }
        body()
        idleLatency.release()
    }

    var kitBackends: [Subject] { settings.subjects.filter { if case .kit = $0 { true } else { false } } }
}

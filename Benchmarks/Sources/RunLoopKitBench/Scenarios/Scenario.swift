/// The scenarios, selectable with `--scenarios`.
enum ScenarioName: String, CaseIterable, Sendable {
    case wake, timer, throughput, idle, coalescing, scale, pass
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
    var subjects: [Subject] = Subject.all

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
        return settings
    }

    func wants(_ subject: Subject) -> Bool { subjects.contains(subject) }
}

/// The context every scenario runs in: settings, where results go, the progress line.
struct Context {
    let settings: Settings
    let results: Results
    let progress: Progress

    var kitBackends: [Subject] { settings.subjects.filter { if case .kit = $0 { true } else { false } } }
}

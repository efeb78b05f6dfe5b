import RunLoopKit

/// The loop of a stress run and the items it keeps for the whole run; made on the loop's
/// thread.
struct StressItems: Sendable {
    let loop: Loop
    let port: Loop.Port<StressMessage>
    let portSource: Loop.Source
    /// One version-0 source per producer.
    let signalSources: [Loop.Source]
    /// Keeps the default mode alive between bursts: never signalled.
    let keepAlive: Loop.Source
    /// Keeps the nested runs' mode alive.
    let nestedKeepAlive: Loop.Source
    /// A repeating timer with a short interval.
    let ticker: Loop.Timer

    init(backend: BackendKind, ledger: StressLedger) throws {
        let loop = try Loop.current(backend: backend)
        let violations = ledger.shared.violations
        self.loop = loop
        port = try Loop.Port<StressMessage>()
        portSource = Loop.Source(port: port) { ledger.message($0, on: loop) }
        signalSources = (0..<ledger.shared.plan.producers).map { producer in
            Loop.Source { ledger.signalPerformed(producer, on: loop) }
        }
        keepAlive = Loop.Source {}
        nestedKeepAlive = Loop.Source {}
        ticker = try Loop.Timer(after: .zero, repeating: .milliseconds(1)) { timer in
            // Inside the callback the instant reads the one being served.
            if ContinuousClock.now < timer.nextFireInstant { violations.record("the repeating timer fired early") }
            ledger.timerFired()
        }
        loop.add(keepAlive, to: .default)
        loop.add(nestedKeepAlive, to: StressPlan.nestedMode)
        loop.add(portSource, to: .default)
        for source in signalSources { loop.add(source, to: .default) }
        loop.add(ticker, to: .default)
    }

    func invalidateEverything() {
        for source in [portSource, keepAlive, nestedKeepAlive] + signalSources { source.invalidate() }
        ticker.invalidate()
    }
}

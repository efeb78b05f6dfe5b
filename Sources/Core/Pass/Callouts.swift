// Named, never-inlined trampolines: a stack trace or profile says which kind of callback the
// loop is in (CFRunLoop's __CFRUNLOOP_IS_CALLING_OUT_TO_…__ functions, without the shouting).
// Each tells the pass's instruments (``PassInstruments``) that a callout begins and ends: that
// counts it for the statistics and says where the loop is for stall monitors.

extension Loop {
    @inline(never)
    func callingOutToBlock(_ body: @Sendable () -> Void) {
        instruments.enterCallout(.block, in: .blocks)
        body()
        instruments.leaveCallout(to: .blocks)
    }

    @inline(never)
    func callingOutToTimer(_ timer: Loop.Timer) {
        instruments.enterCallout(.timer, in: .timers)
        timer.handler(timer)
        instruments.leaveCallout(to: .timers)
    }

    @inline(never)
    func callingOutToObserver(_ observer: Loop.Observer, _ activity: Loop.Activity) {
        let phase = PassPhase(notifying: activity)
        instruments.enterCallout(.observer, in: phase)
        observer.handler(observer, activity)
        instruments.leaveCallout(to: phase)
    }

    @inline(never)
    func callingOutToVersion0Source(_ perform: @Sendable () -> Void) {
        instruments.enterCallout(.version0Source, in: .version0Sources)
        perform()
        instruments.leaveCallout(to: .version0Sources)
    }

    @inline(never)
    func callingOutToDescriptorSource(_ handler: @Sendable (Readiness) -> Void, _ readiness: Readiness) {
        instruments.enterCallout(.descriptorSource, in: .version1Sources)
        handler(readiness)
        instruments.leaveCallout(to: .version1Sources)
    }

    /// Counted per message delivered, not per call: each message is one call of the handler.
    @inline(never)
    func callingOutToPortSource(_ deliver: @Sendable (Loop.Source) -> Int, _ source: Loop.Source) {
        instruments.enterPortDelivery()
        let delivered = deliver(source)
        instruments.leavePortDelivery(delivered: delivered)
    }
}

// Named, never-inlined trampolines: a stack trace or profile says which kind of callback the
// loop is in (CFRunLoop's __CFRUNLOOP_IS_CALLING_OUT_TO_…__ functions, without the shouting).
// Each counts its callout for the statistics and says where the loop is for stall monitors.

extension Loop {
    @inline(never)
    func callingOutToBlock(_ body: @Sendable () -> Void) {
        enterCallout(.block, in: .blocks)
        body()
        publish(.blocks)
    }

    @inline(never)
    func callingOutToTimer(_ timer: Loop.Timer) {
        enterCallout(.timer, in: .timers)
        timer.handler(timer)
        publish(.timers)
    }

    @inline(never)
    func callingOutToObserver(_ observer: Loop.Observer, _ activity: Loop.Activity) {
        let phase = PassPhase(notifying: activity)
        enterCallout(.observer, in: phase)
        observer.handler(observer, activity)
        publish(phase)
    }

    @inline(never)
    func callingOutToVersion0Source(_ perform: @Sendable () -> Void) {
        enterCallout(.version0Source, in: .version0Sources)
        perform()
        publish(.version0Sources)
    }

    @inline(never)
    func callingOutToDescriptorSource(_ handler: @Sendable (Readiness) -> Void, _ readiness: Readiness) {
        enterCallout(.descriptorSource, in: .version1Sources)
        handler(readiness)
        publish(.version1Sources)
    }

    /// Counted per message delivered, not per call: each message is one call of the handler.
    @inline(never)
    func callingOutToPortSource(_ deliver: @Sendable (Loop.Source) -> Int, _ source: Loop.Source) {
        publishPlace(Loop.place(.version1Sources, .portMessage))
        counters.count(.portMessage, times: UInt64(deliver(source)))
        publish(.version1Sources)
    }

    @inline(__always)
    private func enterCallout(_ kind: CalloutKind, in phase: PassPhase) {
        counters.count(kind)
        publishPlace(Loop.place(phase, kind))
    }
}

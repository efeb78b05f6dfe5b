// Named, never-inlined trampolines: a stack trace or profile says which kind of callback the
// loop is in (CFRunLoop's __CFRUNLOOP_IS_CALLING_OUT_TO_…__ functions, without the shouting).

@inline(never)
func callingOutToBlock(_ body: @Sendable () -> Void) {
    body()
}

@inline(never)
func callingOutToTimer(_ timer: Loop.Timer) {
    timer.handler(timer)
}

@inline(never)
func callingOutToObserver(_ observer: Loop.Observer, _ activity: Loop.Activity) {
    observer.handler(observer, activity)
}

@inline(never)
func callingOutToVersion0Source(_ perform: @Sendable () -> Void) {
    perform()
}

@inline(never)
func callingOutToDescriptorSource(_ handler: @Sendable (Readiness) -> Void, _ readiness: Readiness) {
    handler(readiness)
}

@inline(never)
func callingOutToPortSource(_ deliver: @Sendable (Loop.Source) -> Void, _ source: Loop.Source) {
    deliver(source)
}

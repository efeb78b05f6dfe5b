import CoreFoundation
import Foundation
import Synchronization

/// A CFRunLoop reference that may cross threads.
///
/// CFRunLoopPerformBlock, CFRunLoopWakeUp, CFRunLoopStop and CFRunLoopAdd* are thread-safe
/// in CoreFoundation; only running the loop is tied to its thread, which we respect.
struct CFLoop: @unchecked Sendable {
    let ref: CFRunLoop

    static var mode: CFRunLoopMode { kCFRunLoopDefaultMode }

    /// Queues `block` and wakes the loop: CF on Linux does not wake a sleeping loop for a
    /// performed block, so a correct poster always pairs the two calls.
    func perform(_ block: @escaping @Sendable () -> Void) {
        CFRunLoopPerformBlock(ref, CFLoop.mode.asTypeRef, block)
        CFRunLoopWakeUp(ref)
    }
}

extension CFString {
    var asTypeRef: CFTypeRef { unsafeBitCast(self, to: CFTypeRef.self) }
}

/// A CoreFoundation run loop on its own Foundation `Thread`, run in the default mode until
/// `stop()`. A never-signalled version-0 source keeps the mode from being empty.
final class CFHost: Sendable {
    let loop: CFLoop
    private let exited = Probe()
    private let keepAlive: CFSignalSource

    static func start(setup: @escaping @Sendable (CFLoop) -> Void = { _ in }) -> CFHost {
        let handoff = Handoff<CFHost>()
        let thread = Thread {
            let loop = CFLoop(ref: CFRunLoopGetCurrent())
            let keepAlive = CFSignalSource {}
            keepAlive.add(to: loop)
            setup(loop)
            let host = CFHost(loop: loop, keepAlive: keepAlive)
            handoff.put(host)
            while !host.finished.load(ordering: .relaxed) {
                _ = CFRunLoopRunInMode(CFLoop.mode, 1e6, false)
            }
            keepAlive.invalidate()
            host.exited.signal()
        }
        thread.start()
        return handoff.take()
    }

    private let finished = Atomic<Bool>(false)

    private init(loop: CFLoop, keepAlive: CFSignalSource) {
        self.loop = loop
        self.keepAlive = keepAlive
    }

    /// Runs `body` on the loop's thread and returns its value.
    func onLoop<Value: Sendable>(_ body: @escaping @Sendable () -> Value) -> Value {
        let handoff = Handoff<Value>()
        loop.perform { handoff.put(body()) }
        return handoff.take()
    }

    /// Ends the run from inside it and waits until the thread leaves its loop.
    func stop() {
        loop.perform { [self] in
            finished.store(true, ordering: .relaxed)
            CFRunLoopStop(loop.ref)
        }
        _ = exited.wait()
    }
}

/// A CFRunLoop version-0 source calling a Swift closure.
final class CFSignalSource: @unchecked Sendable {
    // CFRunLoopSourceSignal is thread-safe; the closure box lives as long as the source.
    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    let source: CFRunLoopSource
    private let box: Unmanaged<Box>

    init(perform: @escaping @Sendable () -> Void) {
        box = Unmanaged.passRetained(Box(perform))
        var context = CFRunLoopSourceContext()
        context.version = 0
        context.info = box.toOpaque()
        context.perform = { info in Unmanaged<Box>.fromOpaque(info!).takeUnretainedValue().body() }
        source = CFRunLoopSourceCreate(kCFAllocatorDefault, 0, &context)
    }

    deinit {
        CFRunLoopSourceInvalidate(source)
        box.release()
    }

    func add(to loop: CFLoop) { CFRunLoopAddSource(loop.ref, source, CFLoop.mode) }

    func invalidate() { CFRunLoopSourceInvalidate(source) }

    /// Signals the source and wakes its loop (CF does not wake a sleeping loop on a signal).
    func signal(_ loop: CFLoop) {
        CFRunLoopSourceSignal(source)
        CFRunLoopWakeUp(loop.ref)
    }
}

/// Counts a CF loop's wakeups: an observer on `kCFRunLoopAfterWaiting`, which CF notifies
/// once each time it returns from a wait that slept — what RunLoopKit's statistics count.
final class CFWakeCounter: @unchecked Sendable {
    // `count` is written by the observer on the loop thread and read elsewhere: atomic.
    // `observer` is set once in init, before the counter is shared.
    let count = Atomic<UInt64>(0)
    private var observer: CFRunLoopObserver?

    init(on loop: CFLoop) {
        let observer = CFRunLoopObserverCreateWithHandler(
            kCFAllocatorDefault, CFRunLoopActivity.afterWaiting.rawValue, true, 0
        ) { [self] _, _ in
            self.count.add(1, ordering: .relaxed)
        }
        CFRunLoopAddObserver(loop.ref, observer, CFLoop.mode)
        self.observer = observer
    }

    func invalidate() {
        if let observer { CFRunLoopObserverInvalidate(observer) }
    }
}

// Items whose handlers are main-actor code, on the main loop: each handler touches `handled`,
// which only main-actor code may touch (the file compiles only because they are main-actor
// code), and checks where it runs.
import Glibc
import RunLoopKit

/// What the handlers did, in order; main-actor state.
@MainActor private var handled: [String] = []

/// Adds a timer, a version-0 source, a port source, a descriptor source and an observer, all
/// with main-actor handlers written here, then runs the main loop until a `{ @MainActor in }`
/// block stops it. Each handler hands on to the next, so the order is fixed; returns what each
/// recorded and the run's result.
@MainActor func runMainActorHandlers(on loop: Loop) throws -> [String] {
    /// Records `event` with whether the main actor's executor agrees it runs on it (a trap
    /// otherwise) and whether this is the main loop's thread.
    func record(_ event: String) {
        MainActor.assertIsolated("not on the main actor")
        handled.append("\(event) on main: \(Loop.currentIfCreated === loop)")
    }
    var descriptors: [Int32] = [-1, -1]
    guard pipe(&descriptors) == 0 else { fatalError("pipe: \(errno)") }
    let (readEnd, writeEnd) = (descriptors[0], descriptors[1])
    defer {
        close(readEnd)
        close(writeEnd)
    }
    let port = try Loop.Port<String>()

    let observer = Loop.Observer(activities: [.entry, .exit]) { _, activity in record("observer \(activity)") }
    let descriptorSource = try Loop.Source(fileDescriptor: readEnd) { readiness in
        record("descriptor \(readiness)")
        var byte: UInt8 = 0
        _ = read(readEnd, &byte, 1)
        loop.perform { @MainActor in
            record("block")
            loop.stop()
        }
    }
    let portSource = Loop.Source(port: port) { message in
        record("port \(message)")
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }
    let signalled = Loop.Source {
        record("version-0 source")
        port.send("hello")
    }
    let timer = try Loop.Timer(after: .milliseconds(1)) { _ in
        record("timer")
        signalled.signal()
    }
    loop.add(observer, to: .default)
    for source in [descriptorSource, portSource, signalled] { loop.add(source, to: .default) }
    loop.add(timer, to: .default)
    let result = loop.run(timeout: .seconds(30))
    for source in [descriptorSource, portSource, signalled] { source.invalidate() }
    observer.invalidate()
    return handled + ["run: \(result)"]
}

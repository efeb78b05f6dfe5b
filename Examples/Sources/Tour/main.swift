// A tour of RunLoopKit in one run: a timer, a version-0 source, an observer, blocks performed
// from another thread, a descriptor source on a pipe and a message port.
//
// The same program runs on any backend of the build and tells the same story on each: the
// loop's behaviour lives in one core, and only the kernel wait differs.
//
//   swift run --package-path Examples tour                    # the build's default backend
//   swift run --package-path Examples --traits Epoll,URing,Libevent tour uring
import Dispatch
import Glibc
import RunLoopKit
import Synchronization

// Usage: tour [epoll|uring|libevent|glib]; without an argument, the build's default.
let requested = CommandLine.arguments.dropFirst().first
guard let kind = requested.map({ BackendKind(rawValue: $0) }) ?? BackendKind.default else {
    print(
        "tour: unknown backend '\(requested!)'; this build has: \(BackendKind.allCases.map(\.rawValue).joined(separator: ", "))"
    )
    exit(2)
}
let loop: Loop
do {
    loop = try Loop.current(backend: kind)
} catch {
    print("tour: \(error)")
    exit(1)
}
print(
    "RunLoopKit tour on the \(loop.backend) backend (this build has: \(BackendKind.allCases.map(\.rawValue).joined(separator: ", ")))"
)

let started = ContinuousClock.now
@Sendable func stamp(_ text: String) {
    let elapsed = ContinuousClock.now - started
    let millis = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    print(
        String(repeating: " ", count: max(0, 9 - "\(Int(millis))".count))
            + "\(Int(millis)).\(Int(millis * 10) % 10) ms  \(text)")
}

// An observer counts the times the loop went to sleep.
let sleeps = Atomic<Int>(0)
let observer = Loop.Observer(activities: [.beforeWaiting]) { _, _ in sleeps.add(1, ordering: .relaxed) }
loop.add(observer, to: .default)

// A version-0 source: signalled by hand, performed in the next pass.
let source = Loop.Source { stamp("version-0 source performed") }
loop.add(source, to: .default)

// A descriptor source on a pipe: RunLoopKit never reads your descriptor, the handler does.
var ends: [Int32] = [0, 0]
guard pipe(&ends) == 0 else { fatalError("pipe failed") }
let (readEnd, writeEnd) = (ends[0], ends[1])
let pipeSource = try Loop.Source(fileDescriptor: readEnd, interest: .readable) { readiness in
    var bytes = [UInt8](repeating: 0, count: 64)
    let count = read(readEnd, &bytes, bytes.count)
    stamp("pipe \(readiness): read \"\(String(decoding: bytes.prefix(max(count, 0)), as: UTF8.self))\"")
}
loop.add(pipeSource, to: .default)

// A message port: any thread sends, the loop's thread receives in order.
let port = try Loop.Port<String>()
let portSource = Loop.Source(port: port) { message in stamp("port message: \(message)") }
loop.add(portSource, to: .default)

// A repeating timer drives the tour and stops the loop after its fourth tick.
let ticks = Atomic<Int>(0)
let timer = try Loop.Timer(after: .milliseconds(20), repeating: .milliseconds(20)) { timer in
    let tick = ticks.add(1, ordering: .relaxed).newValue
    stamp("timer tick \(tick)")
    switch tick {
    case 1: source.signal()
    case 2: _ = "hello".withCString { write(writeEnd, $0, 5) }
    case 3: port.send("from the loop's own thread")
    default: loop.stop()
    }
}
loop.add(timer, to: .default)

// Another thread posts a block and a port message while the loop sleeps (Dispatch's pool keeps
// the example short; a thread of any kind does the same).
let poster = DispatchGroup()
DispatchQueue.global().async(group: poster) {
    loop.perform { stamp("block performed from another thread") }
    port.send("from another thread")
}

let result = loop.run()
stamp("run returned .\(result) after \(sleeps.load(ordering: .relaxed)) sleeps")
poster.wait()
timer.invalidate()
pipeSource.invalidate()
close(readEnd)
close(writeEnd)

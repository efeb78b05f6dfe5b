import Dispatch
import Glibc
import RunLoopKit
import RunLoopKitGLib
import TestSupport
import Testing

/// Behaviour contract X3 (misuse traps with a message naming the mistake), for the adapter's
/// traps: each misuse runs in an exit test's child, whose standard error is read. `scripts/test`
/// runs these against a release build too, where a `precondition`'s message would be dropped.
@Suite("RunLoopKitGLib: misuse traps with a message")
struct AttachMisuseTests {
    @Test("attaching a loop on a thread that is not its own traps", arguments: embeddableBackends.map(\.name))
    func attachOffThread(_ name: String) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [name] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let made = DispatchSemaphore(value: 0)
            let loop = Ref<Loop>()
            _ = try TestThread {
                loop.value = try? Loop.current(backend: BackendKind(rawValue: name)!)
                made.signal()
                DispatchSemaphore(value: 0).wait()
            }
            made.wait()
            _ = try loop.value!.attach()
        }
        #expect(
            standardError(of: result).contains("Loop.attach(to:mode:priority:) called on a thread that is not"),
            "\(standardError(of: result).prefix(300))")
    }

    @Test("attaching a loop in .common traps", arguments: embeddableBackends.map(\.name))
    func attachInCommon(_ name: String) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [name] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            _ = try Loop.current(backend: BackendKind(rawValue: name)!).attach(mode: .common)
        }
        #expect(
            standardError(of: result).contains("Loop.attach(to:mode:priority:): .common is a set of modes"),
            "\(standardError(of: result).prefix(300))")
    }
}

private func standardError(of result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

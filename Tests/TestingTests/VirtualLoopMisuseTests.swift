import Glibc
import RunLoopKit
import RunLoopKitTesting
import TestSupport
import Testing

/// Moving a virtual loop's time from one of its own callouts would wait for the callout to
/// end: it traps with a message naming the mistake, in debug and release builds alike (rule X3;
/// `scripts/test` runs the suites against a release build too).
@Suite("VirtualLoop: misuse traps")
struct VirtualLoopMisuseTests {
    @Test(
        "advance and runUntilIdle from the loop's own callout trap, naming the mistake",
        arguments: ["advance(by:)", "advance(to:)", "runUntilIdle()"])
    func fromItsOwnCallout(_ function: String) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            [function = function as String] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let virtual = try VirtualLoop()
            let done = Latch()
            virtual.loop.perform {
                switch function {
                case "advance(by:)": try? virtual.advance(by: .seconds(1))
                case "advance(to:)": try? virtual.advance(to: virtual.now)
                default: try? virtual.runUntilIdle()
                }
                done.open()
            }
            _ = done.wait()
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            errors.contains("VirtualLoop.\(function) called on the loop's own thread (from one of its callouts)"),
            "\(errors)")
    }
}

import Glibc
import RunLoopKit
import Testing

/// Behaviour contract › D4: Message ports; X3: Misuse traps. `send(_:)` never drops a message
/// silently nor queues one beyond a port's capacity: on a full or closed port it traps with a
/// message naming what is wrong and what to use instead.
extension MisuseTests {
    @Test("send on a full port traps, naming the capacity and the sends that do not trap")
    func sendOnFullPort() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let port = try Loop.Port<Int>(capacity: 2)
            port.send(1)
            port.send(2)
            port.send(3)
        }
        #expect(
            standardError(of: result).contains(
                "the port is full (capacity 2); use trySend(_:) or sendWaitingForRoom(_:)"))
    }

    @Test("send on a closed port traps")
    func sendOnClosedPort() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let port = try Loop.Port<Int>()
            port.close()
            port.send(1)
        }
        #expect(standardError(of: result).contains("Loop.Port.send(_:): the port is closed"))
    }
}

/// What a child process wrote to standard error.
private func standardError(of result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

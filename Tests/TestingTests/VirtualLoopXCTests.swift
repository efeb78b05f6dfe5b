import RunLoopKit
import RunLoopKitTesting
import Synchronization
import XCTest

/// A virtual loop from XCTest, as a project whose tests are XCTest cases would use it.
final class VirtualLoopXCTests: XCTestCase {
    func testTimerFiresWhenTimeIsAdvanced() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let start = virtual.now
        let firedAt = Mutex<[ContinuousClock.Instant]>([])
        let timer = try Loop.Timer(after: .seconds(45)) { _ in firedAt.withLock { $0.append(virtual.now) } }
        virtual.loop.add(timer, to: .default)
        try virtual.advance(by: .seconds(44))
        XCTAssertEqual(firedAt.withLock { $0 }, [])
        // The advance returns once the loop has handled the instant: no waiting needed.
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(firedAt.withLock { $0 }, [start + .seconds(45)])
    }

    func testAdvancingBackwardsThrows() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        XCTAssertThrowsError(try virtual.advance(by: .seconds(-1))) { error in
            XCTAssertEqual(
                error as? VirtualLoopError, .backwards(now: virtual.now, requested: virtual.now - .seconds(1)))
        }
    }
}

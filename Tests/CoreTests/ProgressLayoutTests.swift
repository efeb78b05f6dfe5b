import RunLoopKit
import Testing

/// The progress word a stall monitor reads packs the pass phase and the callout kind into a
/// few bits each (`LoopProgress`): a case added beyond a field's capacity must be caught, not
/// silently set the neighbouring bit.
@Suite("Progress word layout")
struct ProgressLayoutTests {
    @Test("every PassPhase and CalloutKind fits its field of the progress word")
    func everyCaseFits() {
        #expect(Loop.progressField(Loop.PassPhase.self, fitsIn: 4))
        #expect(Loop.progressField(Loop.CalloutKind.self, fitsIn: 3))
        #expect(Loop.progressFieldsFit)
    }

    @Test("the check refuses a kind past the field's capacity, and a kind numbered 0")
    func checkRefusesOverflow() {
        #expect(Loop.progressField(Seven.self, fitsIn: 3))
        #expect(!Loop.progressField(Eight.self, fitsIn: 3))
        #expect(!Loop.progressField(Zero.self, fitsIn: 3))
    }

    private enum Seven: UInt8, CaseIterable {
        case a = 1
        case b, c, d, e, f, g
    }

    private enum Eight: UInt8, CaseIterable {
        case a = 1
        case b, c, d, e, f, g, h
    }

    private enum Zero: UInt8, CaseIterable {
        case none = 0
        case a
    }
}

import Testing

/// Hand-written programs for the rules most easily got wrong: each checks the model's
/// prediction against the contract (written out here by hand) and Core against the model.
@Suite("Core against the model: pinned scenarios")
struct ScenarioTests {
    @Test("a run nested in a block sees the blocks the outer drain has not reached, FIFO")
    func nestedRunInBlockSeesQueuedBlocks() async {
        let program = Program.scenario(
            blocks: [.run(.a, timeout: 0, returnAfterSourceHandled: false), .none],
            steps: [
                .perform(modes: [.default], action: 0),
                // Mode A has nothing but this block: queued, it keeps A from being empty.
                .perform(modes: [.a], action: 1),
                .perform(modes: [.default], action: 1),
                .run(.default, timeout: 0, returnAfterSourceHandled: false),
            ]
        )
        await expectEvents(
            of: program,
            [
                "0ms run default",
                "0ms block b1 in default",
                "0ms run A",
                "0ms block b2 in A",
                "0ms run A -> timedOut",
                "0ms block b3 in default",
                "0ms run default -> timedOut",
            ])
    }

    @Test("blocks stay FIFO when a block makes the running mode common")
    func blocksStayFIFOWhenTheModeBecomesCommon() async {
        let program = Program.scenario(
            blocks: [.addCommonMode(.a), .none],
            steps: [
                .perform(modes: [.a], action: 0),
                .perform(modes: [.common], action: 1),
                .perform(modes: [.a], action: 1),
                .run(.a, timeout: 0, returnAfterSourceHandled: false),
            ]
        )
        await expectEvents(
            of: program,
            [
                "0ms run A",
                "0ms block b1 in A",
                "0ms block b2 in A",
                "0ms block b3 in A",
                "0ms run A -> timedOut",
            ])
    }

    @Test("nextFireInstant set in the timer's own callback replaces the advance, even when sooner (T6)")
    func fireInstantSetInOwnCallback() async {
        let program = Program.scenario(
            timers: [
                0: .init(
                    fireAt: 10, interval: 10, tolerance: 0, order: 0,
                    actions: [.setFireInstant(timer: 0, fromNow: 2), .none])
            ],
            steps: [
                .add(.timer(0), .default),
                .run(.default, timeout: 25, returnAfterSourceHandled: false),
            ]
        )
        // 10 → set to 12 (earlier than the advance to 20) → 12 → advance to 22 → set to 24.
        await expectEvents(
            of: program,
            [
                "0ms run default",
                "0ms sleep until 10ms",
                "10ms timer t0 @10ms in default",
                "10ms sleep until 12ms",
                "12ms timer t0 @12ms in default",
                "12ms sleep until 22ms",
                "22ms timer t0 @22ms in default",
                "22ms sleep until 24ms",
                "24ms timer t0 @24ms in default",
                "24ms sleep until 25ms",
                "25ms run default -> timedOut",
            ])
    }

    @Test("a past instant set in the timer's own callback means now: it fires in the next pass, not the same one")
    func pastFireInstantSetInOwnCallbackFiresNextPass() async {
        let program = Program.scenario(
            timers: [
                0: .init(
                    fireAt: 10, interval: 10, tolerance: 0, order: 0,
                    actions: [.setFireInstant(timer: 0, fromNow: -2), .none])
            ],
            observers: [0: .init(activities: [.beforeTimers], repeats: true, order: 0, actions: [])],
            steps: [
                .add(.timer(0), .default),
                .add(.observer(0), .default),
                // The loop was busy: the timer is served 5 ms late, and sets now - 2 ms.
                .advanceClock(15),
                .run(.default, timeout: 0, returnAfterSourceHandled: false),
                .run(.default, timeout: 0, returnAfterSourceHandled: false),
            ]
        )
        #expect(
            Array(Model.predict(program, observed: nil).steps[3].dropLast()) == [
                "15ms run default",
                "15ms observer o0 beforeTimers in default",
                "15ms timer t0 @10ms in default",
                "15ms run default -> timedOut",
            ])
        await expectEvents(
            of: program,
            [
                "15ms run default",
                "15ms observer o0 beforeTimers in default",
                "15ms timer t0 @15ms in default",
                "15ms run default -> timedOut",
            ])
    }

    @Test("the instant being served, set in the timer's own callback, means now: it fires again in the next pass (T6)")
    func servedInstantSetInOwnCallbackFiresAgain() async {
        let program = Program.scenario(
            timers: [
                0: .init(
                    fireAt: 10, interval: 10, tolerance: 0, order: 0,
                    actions: [.setFireInstant(timer: 0, fromNow: -5), .none])
            ],
            steps: [
                .add(.timer(0), .default),
                // The loop was busy: the timer is served 5 ms late, and sets the instant served.
                .advanceClock(15),
                .run(.default, timeout: 0, returnAfterSourceHandled: false),
                .run(.default, timeout: 0, returnAfterSourceHandled: false),
            ]
        )
        #expect(
            Array(Model.predict(program, observed: nil).steps[2].dropLast()) == [
                "15ms run default",
                "15ms timer t0 @10ms in default",
                "15ms run default -> timedOut",
            ])
        await expectEvents(
            of: program,
            [
                "15ms run default",
                "15ms timer t0 @15ms in default",
                "15ms run default -> timedOut",
            ])
    }

    @Test("a timer re-armed to now by another timer's callback fires in a later pass")
    func timerReArmedByAnotherFiresNextPass() async {
        let program = Program.scenario(
            timers: [
                0: .init(
                    fireAt: 0, interval: nil, tolerance: 0, order: 0, actions: [.setFireInstant(timer: 1, fromNow: 0)]),
                1: .init(fireAt: 30, interval: nil, tolerance: 0, order: 0, actions: []),
            ],
            steps: [
                .add(.timer(1), .default),
                .add(.timer(0), .default),
                .run(.default, timeout: 0, returnAfterSourceHandled: false),
            ]
        )
        await expectEvents(
            of: program,
            [
                "0ms run default",
                "0ms timer t0 @0ms in default",
                "0ms run default -> timedOut",
            ])
    }

    @Test(
        "a timer that left a mode and is added back by a timer callback fires in a later pass, even at its old instant")
    func timerAddedBackDuringStepWaitsForLaterPass() async {
        // Found by the random programs: the entry queued before t1 left the mode still stood
        // for it (same generation) when it came back, and served the step that re-added it.
        let program = Program.scenario(
            timers: [
                0: .init(fireAt: 10, interval: nil, tolerance: 0, order: 0, actions: [.add(.timer(1), .default)]),
                1: .init(fireAt: 10, interval: 100, tolerance: 0, order: 1, actions: []),
            ],
            observers: [0: .init(activities: [.beforeTimers], repeats: true, order: 0, actions: [])],
            steps: [
                .add(.observer(0), .default),
                .add(.timer(1), .default),
                .remove(.timer(1), .default),
                .add(.timer(0), .default),
                .run(.default, timeout: 15, returnAfterSourceHandled: false),
            ]
        )
        await expectEvents(
            of: program,
            [
                "0ms run default",
                "0ms observer o0 beforeTimers in default",
                "0ms sleep until 10ms",
                // Woken at 10 ms, the pass that slept fires the due timers (CFRunLoop's order).
                "10ms timer t0 @10ms in default",
                "10ms observer o0 beforeTimers in default",
                "10ms timer t1 @10ms in default",
                "10ms observer o0 beforeTimers in default",
                "10ms sleep until 15ms",
                "15ms run default -> timedOut",
            ])
    }

    @Test("a signalled common source joins a mode made common later and is performed there")
    func signalledSourceJoinsModeMadeCommon() async {
        let program = Program.scenario(
            steps: [
                .add(.source(0), .common),
                // In no mode now, but still a common item; signalled there.
                .remove(.source(0), .default),
                .signal(source: 0),
                .addCommonMode(.a),
                .run(.a, timeout: 0, returnAfterSourceHandled: false),
            ]
        )
        await expectEvents(
            of: program,
            [
                "0ms run A",
                "0ms source s0 in A",
                "0ms run A -> timedOut",
            ])
    }

    @Test("a timer that joins a mode made common while in no mode has its past instant clamped, as add(_:to:) does")
    func commonTimerJoiningLaterIsClamped() async {
        let program = Program.scenario(
            timers: [0: .init(fireAt: 0, interval: 10, tolerance: 0, order: 0, actions: [])],
            steps: [
                .add(.timer(0), .common),
                .remove(.timer(0), .default),
                .advanceClock(5),
                .addCommonMode(.a),
                .run(.a, timeout: 0, returnAfterSourceHandled: false),
            ]
        )
        await expectEvents(
            of: program,
            [
                "5ms run A",
                "5ms timer t0 @5ms in A",
                "5ms run A -> timedOut",
            ])
    }

    @Test("an invalidated common source is no longer in common, even when it was in no mode")
    func invalidatedCommonSourceLeavesCommon() async {
        let program = Program.scenario(
            steps: [
                .add(.source(0), .common),
                .remove(.source(0), .default),
                .invalidate(.source(0)),
            ]
        )
        let state = Model.predict(program, observed: nil).steps.last!.last!
        #expect(state.contains("s0 invalid;"))
        await checkAgainstModel(program)
    }

    @Test("a run without timeout that would sleep forever is ended by a stop from another thread")
    func endlessSleepIsStopped() async {
        let program = Program.scenario(
            steps: [
                .add(.source(0), .default),
                .run(.default, timeout: nil, returnAfterSourceHandled: false),
            ]
        )
        await expectEvents(
            of: program,
            [
                "0ms run default",
                "0ms \(Model.endlessSleep)",
                "0ms run default -> stopped",
            ])
    }

    @Test("a timer due and a descriptor ready when one wait ends are both handled in that pass, the timer first (R7)")
    func timerThenDescriptorInOnePass() async {
        let program = Program.scenario(
            descriptors: [0: .init(interest: .readable, order: 0, actions: [.setReadiness(descriptor: 0, [])])],
            timers: [0: .init(fireAt: 10, interval: nil, tolerance: 0, order: 0, actions: [])],
            observers: [0: .init(activities: [.beforeTimers], repeats: true, order: 0, actions: [])],
            steps: [
                .add(.observer(0), .default),
                .add(.timer(0), .default),
                .add(.descriptor(0), .default),
                .advanceClock(10),
                .setReadiness(descriptor: 0, [.readable]),
                .run(.default, timeout: 20, returnAfterSourceHandled: false),
            ]
        )
        await expectEvents(
            of: program,
            [
                "10ms run default",
                "10ms observer o0 beforeTimers in default",
                "10ms timer t0 @10ms in default",
                "10ms source d0 [readable] in default",
                "10ms observer o0 beforeTimers in default",
                "10ms sleep until 30ms",
                "30ms run default -> timedOut",
            ])
    }

    @Test(
        "a ready descriptor is handled in every pass until drained; hang-ups reach every interest, by order (D2, D3, D6)"
    )
    func levelTriggeredDescriptors() async {
        let program = Program.scenario(
            descriptors: [
                0: .init(interest: .readable, order: 1, actions: [.none, .setReadiness(descriptor: 0, [])]),
                1: .init(interest: .writable, order: 0, actions: [.setReadiness(descriptor: 1, [])]),
            ],
            steps: [
                .add(.descriptor(0), .default),
                .add(.descriptor(1), .default),
                .setReadiness(descriptor: 0, [.readable]),
                .setReadiness(descriptor: 1, [.readable, .hangup]),
                .run(.default, timeout: 5, returnAfterSourceHandled: false),
            ]
        )
        await expectEvents(
            of: program,
            [
                "0ms run default",
                "0ms source d1 [hangup] in default",
                "0ms source d0 [readable] in default",
                "0ms source d0 [readable] in default",
                "0ms sleep until 5ms",
                "5ms run default -> timedOut",
            ])
    }

    @Test("a descriptor source that leaves the mode between the wait and its turn is skipped, even when back (D8)")
    func descriptorEventOfEndedRegistrationIsDropped() async {
        let program = Program.scenario(
            descriptors: [0: .init(interest: .readable, order: 0, actions: [.setReadiness(descriptor: 0, [])])],
            timers: [
                0: .init(
                    fireAt: 0, interval: nil, tolerance: 0, order: 0, actions: [.remove(.descriptor(0), .default)]),
                1: .init(fireAt: 0, interval: nil, tolerance: 0, order: 1, actions: [.add(.descriptor(0), .default)]),
            ],
            steps: [
                .add(.timer(0), .default),
                .add(.timer(1), .default),
                .add(.descriptor(0), .default),
                .setReadiness(descriptor: 0, [.readable]),
                .run(.default, timeout: 0, returnAfterSourceHandled: false),
                .run(.default, timeout: 0, returnAfterSourceHandled: false),
            ]
        )
        #expect(
            Array(Model.predict(program, observed: nil).steps[4].dropLast()) == [
                "0ms run default",
                "0ms timer t0 @0ms in default",
                "0ms timer t1 @0ms in default",
                "0ms run default -> timedOut",
            ])
        await expectEvents(
            of: program,
            [
                "0ms run default",
                "0ms source d0 [readable] in default",
                "0ms run default -> timedOut",
            ])
    }

    @Test("timers whose tolerance windows overlap are served by one wakeup inside both windows (T9)")
    func tolerantTimersShareAWakeup() async {
        let program = Program.scenario(
            timers: [
                0: .init(fireAt: 10, interval: nil, tolerance: 5, order: 0, actions: []),
                1: .init(fireAt: 12, interval: nil, tolerance: 5, order: 0, actions: []),
            ],
            steps: [
                .add(.timer(0), .default),
                .add(.timer(1), .default),
                .run(.default, timeout: 30, returnAfterSourceHandled: false),
            ]
        )
        guard let trace = await runOnCore(program) else {
            Issue.record("Core did not finish the program")
            return
        }
        let events = trace.steps.last!
        func firedAt(_ timer: String) -> Int64? {
            events.first { $0.contains("timer \(timer) ") }.flatMap {
                TraceFormat.nanoseconds(parsing: $0.prefix { $0 != " " })
            }
        }
        let (first, second) = (firedAt("t0"), firedAt("t1"))
        #expect(first != nil && first == second, "one wakeup serves both: \(events)")
        #expect(first.map { (12_000_000...15_000_000).contains($0) } == true, "inside both windows: \(events)")
        await checkAgainstModel(program)
    }

    /// The model predicts exactly `events` (less the state line) for the last step, and Core
    /// does what the model predicts.
    private func expectEvents(
        of program: Program, _ events: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        // Exact timers only: the model needs none of Core's choices.
        let predicted = Model.predict(program, observed: nil)
        #expect(
            Array(predicted.steps.last!.dropLast()) == events, "the model's reading of the rule",
            sourceLocation: sourceLocation)
        await checkAgainstModel(program, sourceLocation: sourceLocation)
    }
}

extension Program {
    /// A hand-written program; items not given are inert (order 0, no callout actions, and an
    /// observer watches `exit` only).
    static func scenario(
        sources: [Int: SourceSpec] = [:],
        descriptors: [Int: DescriptorSpec] = [:],
        timers: [Int: TimerSpec] = [:],
        observers: [Int: ObserverSpec] = [:],
        blocks: [Action] = [],
        steps: [Action]
    ) -> Program {
        let slots = 0..<ProgramGenerator.itemsPerKind
        return Program(
            sources: slots.map { sources[$0] ?? SourceSpec(order: 0, actions: []) },
            descriptors: slots.map { descriptors[$0] ?? DescriptorSpec(interest: .readable, order: 0, actions: []) },
            timers: slots.map {
                timers[$0] ?? TimerSpec(fireAt: 0, interval: nil, tolerance: 0, order: 0, actions: [])
            },
            observers: slots.map {
                observers[$0] ?? ObserverSpec(activities: [.exit], repeats: true, order: 0, actions: [])
            },
            blockActions: blocks,
            steps: steps
        )
    }
}

import TestSupport

/// Fails unless the kernel holds no registration for the loop's sources (see
/// ``KernelRegistrations``); `when` says at what point, for the message.
func checkNothingRegisteredInKernel(_ kernel: KernelRegistrations, _ when: String) {
    do {
        let held = try kernel.registrations()
        check(held.isEmpty, "\(kernel) still holds \(held.count) registrations \(when): \(held)")
    } catch {
        fail("\(when): \(error)")
    }
}

/// Whether a transfer may start now, given the network: the one question the scheduler
/// asks when it dispatches.
///
/// A value built from facts (online, default interface wireless, metered); deciding is
/// pure, so the whole table is testable without a network.
public struct NetworkGate: Sendable, Equatable {
    public enum Decision: Sendable, Equatable {
        case go
        /// No default route over an interface that is up: the queue waits, nothing fails.
        case waitForNetwork
        /// Online, but not the way a Wi-Fi-only rule allows: the default route leaves
        /// through a wired or mobile interface, or through Wi-Fi NetworkManager calls metered.
        case waitForWiFi
    }

    /// What a transfer needs from the network.
    public enum Requirement: Sendable, Equatable {
        /// Manual uploads, downloads, and watch rules without the Wi-Fi option.
        case anyNetwork
        /// A watch rule set to "Wi-Fi only".
        case unmeteredWiFi
    }

    public var isOnline: Bool
    /// The interface the default route leaves by; nil when offline.
    public var defaultInterface: String?
    public var defaultInterfaceIsWireless: Bool
    public var metered: MeteredAnswer

    public init(isOnline: Bool, defaultInterface: String?, defaultInterfaceIsWireless: Bool, metered: MeteredAnswer) {
        self.isOnline = isOnline
        self.defaultInterface = defaultInterface
        self.defaultInterfaceIsWireless = defaultInterfaceIsWireless
        self.metered = metered
    }

    /// Gathers the facts for `state`: reads sysfs for the default interface, and asks
    /// NetworkManager about metering only when that interface is wireless (the answer
    /// matters for nothing else, and it may cost an nmcli run).
    public init(state: NetworkState, classifier: InterfaceClassifier, meteredCheck: MeteredCheck) {
        let interface = state.defaultInterface?.name
        let wireless = interface.map(classifier.isWireless) ?? false
        let metered: MeteredAnswer = if let interface, wireless { meteredCheck.answer(forInterface: interface) } else { .unknown }
        self.init(isOnline: state.isOnline, defaultInterface: interface, defaultInterfaceIsWireless: wireless, metered: metered)
    }

    /// Why a Wi-Fi-only rule waits now, in words; nil when it may go.
    public var wifiWait: String? {
        switch decision(for: .unmeteredWiFi) {
        case .go: return nil
        case .waitForNetwork: return "there is no network"
        case .waitForWiFi:
            let name = defaultInterface ?? "?"
            return defaultInterfaceIsWireless ? "the Wi-Fi \(name) is metered" : "the network goes out through \(name), which is not Wi-Fi"
        }
    }

    public func decision(for requirement: Requirement) -> Decision {
        guard isOnline else { return .waitForNetwork }
        switch requirement {
        case .anyNetwork:
            return .go
        case .unmeteredWiFi:
            return defaultInterfaceIsWireless && !metered.isMetered ? .go : .waitForWiFi
        }
    }
}

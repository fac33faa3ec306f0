import Platform
import Queue

/// Whether a watch rule's queued uploads must wait now, and why: the one decision the
/// scheduler asks for each rule it meets. Pure: the rule's folder, the network and the power
/// supply are asked through closures, the last two only when the rule cares.
public enum RuleHold {
    /// The reason `rule`'s uploads to `account` wait, or nil when they may go. A rule no
    /// longer in the config (`nil`) follows its account's Wi-Fi flag, like other auto-uploads.
    ///
    /// - Parameters:
    ///   - wifi: nil when the way out is unmetered Wi-Fi; else why not, in words.
    ///   - power: the machine's power supply now.
    ///   - folderAbsence: how a folder is away now; nil when it is there.
    public static func reason(rule: WatchRule?, account: Account, wifi: () -> String?, power: () -> PowerSource,
                              folderAbsence: (LocalPath) -> FolderAbsence?) -> Reason? {
        guard let rule else {
            guard account.wifiOnly, let why = wifi() else { return nil }
            return Reason(.wifi, "waiting for Wi-Fi: \(why)")
        }
        if rule.paused {
            return Reason(.paused, "the watch rule \(rule.id) is paused",
                          action: "`instant-upload watch resume \(rule.id)` lets its uploads go; `instant-upload retry --now ID` sends one anyway")
        }
        if let absence = folderAbsence(rule.folder) { return folderAway(rule, absence) }
        if rule.wifiOnly ?? account.wifiOnly, let why = wifi() {
            let whose = rule.wifiOnly == nil ? "the account \(account.name) sends" : "the rule \(rule.id) sends"
            return Reason(.wifi, "waiting for Wi-Fi: \(why), and \(whose) only over unmetered Wi-Fi")
        }
        if rule.onACPower {
            let supply = power()
            if supply.holdsACPowerRules {
                return Reason(.battery, "waiting for mains power: the computer is \(supply), and the rule \(rule.id) uploads only when plugged in")
            }
        }
        return nil
    }

    /// Why `rule`'s files cannot be read now though they are not gone for good: its folder
    /// is away (a card taken out, a disk unmounted, the folder moved away), and they come
    /// back with it.
    public static func folderAway(_ rule: WatchRule, _ absence: FolderAbsence) -> Reason {
        switch absence {
        case .missing:
            Reason(.folderMissing, "the folder \(rule.folder.display) is not there (a card taken out?); the file goes when the folder is back")
        case .unmounted:
            Reason(.folderMissing, "the card or disk this file is on is not mounted on \(rule.folder.display) (taken out?); the file goes when it is mounted there again")
        }
    }
}

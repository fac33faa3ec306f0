import Queue
import Watcher

/// One rule as `watch list` shows it: its settings from the config, and how it stands from
/// what the agent wrote down and from its rows. Derived here once for text and JSON alike.
struct WatchListItem {
    var rule: WatchRule
    /// The account the rule uploads to, when there is one by that name.
    var account: Account?
    var overview: WatchOverview
    var agentRunning: Bool

    /// What the agent does with the rule now: `watching`, `scanning_periodically`,
    /// `folder_missing`, `paused`, `not_watching` (see the troubles), `starting` (the agent
    /// has not picked the rule up yet) or `agent_not_running`.
    /// A pause is the config's: the agent's word for the rule lags a moment behind a change
    /// (it reads the config when it is told), and a rule just paused or resumed must not show
    /// as it was.
    var state: String {
        if rule.paused { return "paused" }
        guard agentRunning else { return "agent_not_running" }
        guard let reported = overview.status?.state, reported != "paused" else { return "starting" }
        return reported
    }

    /// What keeps the rule from doing its whole job.
    var troubles: [RuleTrouble] {
        if rule.paused { return [] }
        guard agentRunning else {
            return [RuleTrouble(code: "agent_not_running", message: "the agent is not running, so nothing is watched",
                                action: "start it with `instant-upload run` (or `instant-upload service install`)")]
        }
        var troubles = Self.troubles(overview.status.map { RuleTrouble.decode($0.troubles) } ?? [],
                                     unfinished: overview.pending + overview.failed > 0)
        if account == nil, !troubles.contains(where: { $0.code == "account_missing" }) {
            troubles.append(RuleTrouble(code: "account_missing",
                                        message: rule.account.map { "there is no account named \($0)" } ?? "the rule names no account, and there is not exactly one",
                                        action: "add it with `instant-upload account add`, or give the rule another account"))
        }
        return troubles
    }

    /// The files the rule's watcher holds back (still open for writing, not whole), as the
    /// agent last wrote them down: none while the rule is paused or no agent runs.
    var heldBack: HeldBack {
        guard !rule.paused, agentRunning, let stored = overview.status?.waiting else { return HeldBack() }
        return HeldBack.decode(stored)
    }

    /// The troubles the agent wrote down that need the person now. A folder that is not
    /// there is waited for, a normal state (a card not inserted), unless uploads of the
    /// rule are unfinished: files that vanished with it.
    static func troubles(_ stored: [RuleTrouble], unfinished: Bool) -> [RuleTrouble] {
        stored.filter { unfinished || $0.code != WatcherTrouble.Code.folderMissing.rawValue }
    }

    /// Whether the rule waits for unmetered Wi-Fi, and who says so.
    var wifiOnly: Bool { rule.wifiOnly ?? account?.wifiOnly ?? false }
    var wifiOnlyFrom: String { rule.wifiOnly == nil ? "account" : "rule" }
}

@testable import CLI
import Platform
import Queue
import Testing
import Watcher

@Suite("watch list: a rule's state")
struct WatchListItemTests {
    func item(paused: Bool, agentSays state: String?, agentRunning: Bool = true) -> WatchListItem {
        var overview = WatchOverview()
        overview.status = state.map { WatchStatusRecord(state: $0, troubles: "[]", watchedFolders: 1, overflows: 0, scans: 0) }
        let rule = WatchRule(id: "cam", folder: LocalPath("/home/me/Camera"), remoteFolder: "/Photos", paused: paused)
        return WatchListItem(rule: rule, account: nil, overview: overview, agentRunning: agentRunning)
    }

    @Test("a rule just paused or resumed shows as the config says, before the agent has written its new state down",
          arguments: [(true, "watching", "paused"), (false, "paused", "starting"), (true, nil, "paused"), (false, nil, "starting"),
                      (false, "watching", "watching"), (false, "folder_missing", "folder_missing")] as [(Bool, String?, String)])
    func configFirst(paused: Bool, agentSays: String?, shown: String) {
        #expect(item(paused: paused, agentSays: agentSays).state == shown)
    }

    @Test("without an agent a rule is paused or not watched")
    func noAgent() {
        #expect(item(paused: true, agentSays: "watching", agentRunning: false).state == "paused")
        #expect(item(paused: false, agentSays: "watching", agentRunning: false).state == "agent_not_running")
    }
}

import Foundation
import Testing
import TestSupport

/// The bar reached the terminal in 4 KiB bursts (the
/// first after about 6 s, sometimes cut mid-line), and the summary was
/// glued to a stale bar (`22/24 91% | 22 downlo24 entries: 24 downloaded`),
/// also after a signal. Here the binary runs on a real terminal (a tmux
/// pane, on a tmux server of the test's own) against a slow loopback
/// server, and the screen is read while it runs.
@Suite(.serialized) struct ProgressBarTmuxTests {
    /// A detached tmux session, 200x50, on a server socket of its own.
    final class Pane {
        let tmux: String
        let socket = "imgwarm-test-\(UUID().uuidString.prefix(8))"

        init(tmux: String, command: String) {
            self.tmux = tmux
            run(["new-session", "-d", "-x", "200", "-y", "50", command])
        }

        deinit { _ = run(["kill-server"]) }

        @discardableResult
        /// Output into files, not pipes: the tmux server started by the
        /// first command would inherit a pipe and hold it open.
        func run(_ args: [String]) -> String {
            guard let r = try? MeasuredRun.run(["-L", socket] + args, executable: tmux) else { return "" }
            return r.stdout + r.stderr
        }

        /// The visible screen, trailing blanks dropped.
        func screen() -> [String] {
            run(["capture-pane", "-p"]).split(separator: "\n", omittingEmptySubsequences: false)
                .map { String($0.reversed().drop(while: { $0 == " " }).reversed()) }
        }

        /// Polls the screen until `done` holds (nil after `timeout`).
        func waitFor(timeout: Double, _ done: ([String]) -> Bool) -> [String]? {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                let s = screen()
                if done(s) { return s }
                usleep(50_000)
            }
            return nil
        }
    }

    /// `[####......] 3/24 12% | ...`: a line of the bar for `total` entries.
    static func isBar(_ line: String, total: Int) -> Bool {
        line.hasPrefix("[") && line.contains("] ") && line.contains("/\(total) ") && line.contains("%")
    }

    /// The shell command of the pane: the run, then its exit status, then
    /// a pause so the screen can be read after it.
    static func command(_ f: WarmFixture, _ urls: [String]) -> String {
        let manifest = f.writeManifest(urls)
        return "'\(BinaryRunner.executable)' warm '\(manifest)' --cache '\(f.cache)' --concurrency 2; echo EXIT=$?; sleep 120"
    }

    static func slowPNGs(_ f: WarmFixture, _ count: Int, ms: Int) -> [String] {
        _ = f.servePNGs(count)
        return (0..<count).map { f.server.url("/slow/\(ms)/img/\($0).png") }
    }

    @Test func theBarIsLiveAndTheSummaryGetsACleanLine() throws {
        let tmux = try neededTool("tmux", for: "the progress bar read from a terminal")
        let f = try WarmFixture()
        // 24 entries, two at a time, 300 ms each: about 3.6 s.
        let pane = Pane(tmux: tmux, command: Self.command(f, Self.slowPNGs(f, 24, ms: 300)))
        let started = Date()
        // The bar within the first second, then moving.
        let first = pane.waitFor(timeout: 1) { $0.contains { Self.isBar($0, total: 24) } }
        #expect(first != nil, "no bar within 1 s: \(pane.screen())")
        let firstBar = first?.first { Self.isBar($0, total: 24) } ?? ""
        let moved = pane.waitFor(timeout: 1.5) { s in
            s.contains { Self.isBar($0, total: 24) && $0 != firstBar }
        }
        #expect(moved != nil, "the bar did not change within 1.5 s of \(firstBar)")
        #expect(Date().timeIntervalSince(started) < 3, "the bar was seen late")

        guard let end = pane.waitFor(timeout: 60, { $0.contains { $0.hasPrefix("EXIT=") } }) else {
            Issue.record("the run did not end: \(pane.screen())")
            return
        }
        #expect(end.contains("EXIT=0"), "\(end)")
        // The summary starts its own line; no piece of a bar is left anywhere.
        #expect(end.contains { $0 == "24 entries: 24 downloaded" }, "\(end)")
        #expect(!end.contains { $0.contains("/24 ") || $0.contains("ETA") }, "a stale bar: \(end)")
    }

    @Test func anInterruptErasesTheBarBeforeTheSummary() throws {
        let tmux = try neededTool("tmux", for: "the progress bar read from a terminal")
        let f = try WarmFixture()
        // 40 entries of 1 s, two at a time: still running when interrupted.
        let pane = Pane(tmux: tmux, command: Self.command(f, Self.slowPNGs(f, 40, ms: 1000)))
        let bar = pane.waitFor(timeout: 5) { $0.contains { Self.isBar($0, total: 40) } }
        #expect(bar != nil, "no bar: \(pane.screen())")
        // Ctrl-C on the terminal: SIGINT to the foreground process.
        pane.run(["send-keys", "C-c"])
        guard let end = pane.waitFor(timeout: 30, { $0.contains { $0.hasPrefix("EXIT=") } }) else {
            Issue.record("the run did not end: \(pane.screen())")
            return
        }
        #expect(end.contains("EXIT=130"), "\(end)")
        #expect(end.contains { $0.hasPrefix("40 entries: ") }, "the summary on a line of its own: \(end)")
        #expect(end.contains { $0.hasPrefix("imgwarm: interrupted by SIGINT; ") && $0.contains(" of 40 entries done") }, "\(end)")
        #expect(!end.contains { $0.contains("/40 ") || $0.contains("ETA") }, "a stale bar: \(end)")
    }

    @Test func aSecondSignalExitsAtOnceWithoutLeavingTheBar() throws {
        let tmux = try neededTool("tmux", for: "the progress bar read from a terminal")
        let f = try WarmFixture()
        let pane = Pane(tmux: tmux, command: Self.command(f, Self.slowPNGs(f, 40, ms: 1000)))
        let bar = pane.waitFor(timeout: 5) { $0.contains { Self.isBar($0, total: 40) } }
        #expect(bar != nil, "no bar: \(pane.screen())")
        // SIGTERM twice, as an impatient supervisor sends it: the second
        // exits at once, the first may already have ended the run.
        let pgrep = findTool("pgrep") ?? "/usr/bin/pgrep"
        let found = runTool(pgrep, ["-f", "^\(BinaryRunner.executable) warm \(f.dir)/manifest.txt"])?.output
        guard let value = found.flatMap({ Int32($0.split(separator: "\n").first ?? "") }) else {
            Issue.record("the run's pid was not found: \(found ?? "no pgrep")")
            return
        }
        kill(value, SIGTERM)
        kill(value, SIGTERM)
        guard let end = pane.waitFor(timeout: 30, { $0.contains { $0.hasPrefix("EXIT=") } }) else {
            Issue.record("the run did not end: \(pane.screen())")
            return
        }
        #expect(end.contains("EXIT=143"), "\(end)")
        #expect(!end.contains { $0.contains("/40 ") || $0.contains("ETA") }, "a stale bar: \(end)")
    }
}

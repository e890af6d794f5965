import Foundation
import Testing
import TestSupport

/// scripts/install.sh installs the man page and the completions beside the
/// binary, where `man` and bash find them: checked with the installed
/// files, not with the generator's output. The script installs the binary
/// under test (`--binary`): its release build would take minutes.
@Suite(.serialized) struct InstallScriptTests {
    /// A fresh prefix with everything install.sh puts there; the man page
    /// generator is built once (in .build/generate-manual) by the first run.
    static func installedPrefix() throws -> String {
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("imgwarm-install-\(UUID().uuidString.prefix(8))").path
        let run = try #require(runTool("/bin/bash", [BinaryRunner.packageRoot + "/scripts/install.sh", "--binary", BinaryRunner.executable],
                                       environment: ["PREFIX": prefix], directory: BinaryRunner.packageRoot))
        try #require(run.status == 0, "install.sh failed: \(run.output)")
        return prefix
    }

    @Test func manFindsThePageInThePrefix() throws {
        let man = try neededTool("man", for: "man imgwarm after install.sh")
        let prefix = try Self.installedPrefix()
        defer { try? FileManager.default.removeItem(atPath: prefix) }
        #expect(FileManager.default.fileExists(atPath: prefix + "/share/man/man1/imgwarm.1"))
        // MANPATH names only the prefix: the page is found where install.sh put it.
        let page = try #require(runTool(man, ["imgwarm"], environment: ["MANPATH": prefix + "/share/man", "MANPAGER": "cat",
                                                                         "PAGER": "cat", "MANWIDTH": "120"]))
        #expect(page.status == 0, "man imgwarm: \(page.output)")
        #expect(page.output.contains("IMGWARM(1)"))
        #expect(page.output.contains("--cache"))
        #expect(page.output.contains("--retry-from"), "the page covers the subcommands' options")
        for file in ["share/bash-completion/completions/imgwarm", "share/zsh/site-functions/_imgwarm",
                     "share/fish/vendor_completions.d/imgwarm.fish"] {
            let text = (try? String(contentsOfFile: prefix + "/" + file, encoding: .utf8)) ?? ""
            #expect(text.contains("cache") && text.contains("retry-from"), "\(file) is missing or empty")
        }
    }

    /// Tab after `--cache cachef` in an interactive bash that sourced the
    /// installed completion file completes the folder's name.
    @Test func bashCompletesAPathAfterCache() throws {
        let tmux = try neededTool("tmux", for: "bash completion read from a terminal")
        let prefix = try Self.installedPrefix()
        defer { try? FileManager.default.removeItem(atPath: prefix) }
        let work = prefix + "/work"
        try FileManager.default.createDirectory(atPath: work + "/cachefolder-xyz", withIntermediateDirectories: true)
        try Data("https://example.com/a.png\n".utf8).write(to: URL(fileURLWithPath: work + "/manifest-abc.txt"))
        let rc = prefix + "/bashrc"
        try Data("PS1='$ '\nsource '\(prefix)/share/bash-completion/completions/imgwarm'\ncd '\(work)'\n".utf8)
            .write(to: URL(fileURLWithPath: rc))
        let pane = ProgressBarTmuxTests.Pane(tmux: tmux, command: "bash --noprofile --rcfile '\(rc)' -i")
        #expect(pane.waitFor(timeout: 5) { $0.contains { $0.hasPrefix("$") } } != nil, "no prompt: \(pane.screen())")
        pane.run(["send-keys", "imgwarm warm manifest-a", "Tab"])
        let manifest = pane.waitFor(timeout: 5) { $0.contains { $0.contains("imgwarm warm manifest-abc.txt") } }
        #expect(manifest != nil, "the manifest argument was not completed: \(pane.screen())")
        pane.run(["send-keys", " --cache cachef", "Tab"])
        let cache = pane.waitFor(timeout: 5) { $0.contains { $0.contains("--cache cachefolder-xyz/") } }
        #expect(cache != nil, "--cache's folder was not completed: \(pane.screen())")
        pane.run(["send-keys", " --report manif", "Tab"])
        let report = pane.waitFor(timeout: 5) { $0.contains { $0.contains("--report manifest-abc.txt") } }
        #expect(report != nil, "--report's file was not completed: \(pane.screen())")
    }
}

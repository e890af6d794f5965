import Foundation
import Testing
import TestSupport

/// The flags and defaults the docs name are the binary's: every flag on an
/// `imgwarm` command line or in an option table of README.md and docs/
/// exists in that command's `--help`, every default in an option table is
/// the one `--help` gives, and every flag of `--help` is explained in
/// docs/commands.md (both ways). The error classes and report keys the
/// sources write are explained there too. Other tools' flags (curl, wget2,
/// aria2c in comparisons) are not on an `imgwarm` line and do not count.
@Suite struct DocsFlagsTests {
    static let root = BinaryRunner.packageRoot
    static let subcommands = ["warm", "cache prune", "cache path", "cache stats", "cache verify", "cache failed", "cache clear"]
    /// Taken by every command: explained once, under "Every command".
    static let common: Set<String> = ["--cache", "--layout", "--preset", "--fresco-version"]
    /// ArgumentParser's own, on every command.
    static let builtIn: Set<String> = ["--version", "-h", "--help"]

    /// `--help` of one command: each flag name (long and short) to the
    /// default its help states (`(default: X)`, `[default: X]`), if any.
    static func parseHelp(_ text: String) -> [String: String?] {
        var entries: [String] = []
        var inOptions = false
        for line in text.components(separatedBy: "\n") {
            if line.hasSuffix(":") && !line.hasPrefix(" ") { inOptions = line == "OPTIONS:"; continue }
            guard inOptions else { continue }
            if line.hasPrefix("  -") { entries.append(line) } else if line.hasPrefix("   "), !entries.isEmpty {
                entries[entries.count - 1] += " " + line.trimmingCharacters(in: .whitespaces)
            }
        }
        var flags: [String: String?] = [:]
        for entry in entries {
            // The names: before the first run of two spaces (the description).
            let body = entry.dropFirst(2)
            let head = body.range(of: "  ").map { String(body[..<$0.lowerBound]) } ?? String(body)
            var value: String?
            if let m = entry.firstMatch(of: #/default: ([^)\]]+)[)\]]/#) { value = String(m.output.1).trimmingCharacters(in: .whitespaces) }
            for name in flagNames(head) { flags[name] = value }
        }
        return flags
    }

    // NSRegularExpression: Swift's Regex has no lookbehind.
    nonisolated(unsafe) static let flagPattern = try! NSRegularExpression(pattern: #"(?<![\w\-/.])(--[a-z][a-z0-9\-]*|-[A-Za-z])(?![\w])"#)

    /// `-j`, `--max-bytes` in a piece of text; `--shards=4` gives `--shards`.
    static func flagNames(_ text: String) -> [String] {
        let range = NSRange(text.startIndex..., in: text)
        return flagPattern.matches(in: text, range: range).compactMap { Range($0.range(at: 1), in: text).map { String(text[$0]) } }
    }

    /// A flag named in the docs, with where.
    struct Use: Hashable {
        var command: String?  // nil: a table outside commands.md's command sections (taken as warm's)
        var flag: String
        var place: String
    }

    /// Flags on `imgwarm SUBCOMMAND ...` command lines: in code blocks
    /// (continuation lines joined) and in inline code. A line ends at a
    /// pipe, `;`, `&&`, `||`, a redirection or a comment.
    static func commandLineFlags(_ markdown: String, page: String) -> [Use] {
        var lines: [String] = []
        var inBlock = false
        var pending = ""
        for line in markdown.components(separatedBy: "\n") {
            if line.hasPrefix("```") { inBlock.toggle(); continue }
            if inBlock {
                if line.hasSuffix("\\") { pending += line.dropLast() + " "; continue }
                lines.append(pending + line)
                pending = ""
            } else {
                lines += line.matches(of: #/`(imgwarm [^`]+)`/#).map { String($0.output.1) }
            }
        }
        var uses: [Use] = []
        for line in lines {
            for m in line.matches(of: #/(?:^|[\s"'(=/])imgwarm\s+(warm|cache\s+[a-z]+)\b([^|;&>#]*)/#) {
                let command = String(m.output.1).split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
                for flag in flagNames(String(m.output.2)) { uses.append(Use(command: command, flag: flag, place: "\(page): \(line.trimmingCharacters(in: .whitespaces))")) }
            }
        }
        return uses
    }

    /// A row of an option table (header `option` or `flag`): its flags, its
    /// default cell, and the command of the `##` section it is in.
    struct Row { var command: String?; var flags: [String]; var value: String; var place: String }

    static func optionTableRows(_ markdown: String, page: String) -> [Row] {
        var rows: [Row] = []
        var command: String?
        var inTable = false
        // Only a column headed `default` states defaults (network.md's
        // second column names environment variables).
        var statesDefaults = false
        for line in markdown.components(separatedBy: "\n") {
            if line.hasPrefix("## ") {
                command = sectionCommand(line)
                inTable = false
            }
            guard line.hasPrefix("|") else { inTable = false; continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }
            if cells.first == "option" || cells.first == "flag" {
                inTable = true
                statesDefaults = cells.count > 1 && cells[1] == "default"
                continue
            }
            guard inTable, cells.count >= 2, !(cells[0].hasPrefix("---")) else { continue }
            // The names of the first cell: the start of each `...` span.
            let names = cells[0].matches(of: #/`([^`]+)`/#).compactMap { flagNames(String($0.output.1)).first }
            rows.append(Row(command: command, flags: names, value: statesDefaults ? cells[1] : "", place: "\(page): \(line.prefix(80))"))
        }
        return rows
    }

    /// The command a commands.md heading is about: ``## `imgwarm cache prune` (pruning)``.
    static func sectionCommand(_ heading: String) -> String? {
        if heading.contains("Every command") { return "*" }
        guard let m = heading.firstMatch(of: #/imgwarm (warm|cache [a-z]+)/#) else { return nil }
        return String(m.output.1)
    }

    /// Two statements of a default agree: numbers by value (`15` and
    /// `15.0`), else the first words (up to three) of the shorter equal
    /// those of the longer (`7d` and `7d, Kingfisher's`).
    static func sameDefault(_ a: String, _ b: String) -> Bool {
        func words(_ s: String) -> [String] {
            s.lowercased().replacingOccurrences(of: "`", with: "").split { !($0.isLetter || $0.isNumber || "/._-".contains($0)) }.map(String.init)
        }
        let x = words(a), y = words(b)
        if x.count == 1, y.count == 1, let p = Double(x[0]), let q = Double(y[0]) { return p == q }
        let n = min(3, x.count, y.count)
        return n > 0 && x.prefix(n) == y.prefix(n)
    }

    /// What is wrong between the commands' `--help` and the docs.
    /// `sections`: commands.md's text per command (`*`: every command).
    static func drift(help: [String: [String: String?]], uses: [Use], rows: [Row], sections: [String: String]) -> [String] {
        var problems: [String] = []
        let allFlags = Set(help.values.flatMap(\.keys))
        for use in uses {
            guard let command = use.command, let flags = help[command] else {
                if !allFlags.contains(use.flag) { problems.append("\(use.place): \(use.flag) is no imgwarm flag") }
                continue
            }
            if flags[use.flag] == nil { problems.append("\(use.place): imgwarm \(command) has no \(use.flag)") }
        }
        for row in rows {
            let command = row.command.flatMap { help[$0] != nil ? $0 : nil } ?? "warm"
            for flag in row.flags {
                guard let stated = help[command]?[flag] else {
                    problems.append("\(row.place): imgwarm \(command) has no \(flag)")
                    continue
                }
                let cell = row.value.trimmingCharacters(in: .whitespaces)
                if let stated, !cell.isEmpty, !sameDefault(stated, cell) {
                    problems.append("\(row.place): \(flag)'s default is \(stated) in --help, \(cell) here")
                }
            }
        }
        for (command, flags) in help {
            for flag in flags.keys where !builtIn.contains(flag) {
                let section = Self.common.contains(flag) ? "*" : command
                let text = sections[section] ?? ""
                if !flagNames(text).contains(flag) {
                    problems.append("docs/commands.md: \(flag) of imgwarm \(command) is not explained (section \(section))")
                }
            }
        }
        return problems.sorted()
    }

    static func commandsSections(_ markdown: String) -> [String: String] {
        var sections: [String: String] = [:]
        var current: String?
        for line in markdown.components(separatedBy: "\n") {
            if line.hasPrefix("## ") { current = sectionCommand(line) }
            if let current { sections[current, default: ""] += line + "\n" }
        }
        return sections
    }

    static func pages() throws -> [(String, String)] {
        var names = ["README.md"]
        let docs = try FileManager.default.contentsOfDirectory(atPath: root + "/docs").filter { $0.hasSuffix(".md") }.sorted()
        names += docs.map { "docs/" + $0 }
        let recipes = (try? FileManager.default.contentsOfDirectory(atPath: root + "/docs/recipes")) ?? []
        names += recipes.filter { $0.hasSuffix(".md") }.sorted().map { "docs/recipes/" + $0 }
        return try names.map { ($0, try String(contentsOfFile: root + "/" + $0, encoding: .utf8)) }
    }

    static func binaryHelp() throws -> [String: [String: String?]] {
        var help: [String: [String: String?]] = [:]
        for command in subcommands {
            let r = try BinaryRunner.run(command.split(separator: " ").map(String.init) + ["--help"])
            try #require(r.status == 0, "imgwarm \(command) --help: \(r.stderr)")
            help[command] = parseHelp(r.stdout)
            try #require(help[command]?["--cache"] != nil, "no options parsed from imgwarm \(command) --help")
        }
        return help
    }

    @Test func everyDocumentedFlagIsRealAndEveryFlagIsDocumented() throws {
        let help = try Self.binaryHelp()
        var uses: [Use] = []
        var rows: [Row] = []
        var sections: [String: String] = [:]
        for (page, text) in try Self.pages() {
            uses += Self.commandLineFlags(text, page: page)
            rows += Self.optionTableRows(text, page: page)
            if page == "docs/commands.md" { sections = Self.commandsSections(text) }
        }
        #expect(uses.count > 20 && rows.count > 20, "the docs' flags were found (\(uses.count) on command lines, \(rows.count) table rows)")
        let problems = Self.drift(help: help, uses: uses, rows: rows, sections: sections)
        #expect(problems.isEmpty, "\(problems.count) problems:\n\(problems.joined(separator: "\n"))")
    }

    /// The comparison itself: a flag taken out of `--help`, a default
    /// changed, a flag the docs invent, each is found.
    @Test func theComparisonFindsEachKindOfDrift() {
        let help = """
            USAGE: imgwarm warm [<manifest> ...] [--cache <dir>]

            OPTIONS:
              --cache <dir>           The folder. [env: IMGWARM_CACHE; default:
                                      somewhere]
              -j, --concurrency <auto|n>
                                      Transfers in flight. (default: auto)
              --retries <retries>     Extra attempts. (default: 2)
              -h, --help              Show help information.

            """
        let parsed = Self.parseHelp(help)
        #expect(parsed["-j"] == .some("auto") && parsed["--concurrency"] == .some("auto"))
        #expect(parsed["--retries"] == .some("2") && parsed["--cache"] == .some("somewhere"))
        let docs = """
            ## Every command

            `--cache DIR`: the folder.

            ## `imgwarm warm MANIFEST...`

            | option | default | meaning |
            |---|---|---|
            | `-j, --concurrency auto\\|N` | auto | transfers |
            | `--retries N` | 2 | attempts |

            ```sh
            imgwarm warm feed.txt -j 8 --retries 3 | tee log   # curl --parallel -Z is not ours
            ```
            """
        let uses = Self.commandLineFlags(docs, page: "t.md")
        #expect(Set(uses.map(\.flag)) == ["-j", "--retries"], "after the pipe is another command")
        let rows = Self.optionTableRows(docs, page: "t.md")
        let sections = Self.commandsSections(docs)
        let whole = ["warm": parsed]
        #expect(Self.drift(help: whole, uses: uses, rows: rows, sections: sections) == [])

        // --retries gone from --help: its table row and its command line are found.
        var removed = parsed
        removed["--retries"] = nil
        let found = Self.drift(help: ["warm": removed], uses: uses, rows: rows, sections: sections)
        #expect(found.count == 2 && found.allSatisfy { $0.contains("has no --retries") }, "\(found)")
        // A default changed in --help only.
        var changed = parsed
        changed["--retries"] = .some("5")
        #expect(Self.drift(help: ["warm": changed], uses: uses, rows: rows, sections: sections)
            == ["t.md: | `--retries N` | 2 | attempts |: --retries's default is 5 in --help, 2 here"])
        // A flag in --help the docs do not explain.
        var added = parsed
        added["--proxy"] = .some(nil)
        #expect(Self.drift(help: ["warm": added], uses: uses, rows: rows, sections: sections)
            == ["docs/commands.md: --proxy of imgwarm warm is not explained (section warm)"])
    }

    /// Every error class and outcome name (Support/EntryOutcome.swift) and
    /// every key of the JSON report (Report/RunReport.swift) is explained
    /// in docs/commands.md, in backquotes.
    @Test func errorClassesAndReportKeysAreExplained() throws {
        let commands = try String(contentsOfFile: Self.root + "/docs/commands.md", encoding: .utf8)
        let outcome = try String(contentsOfFile: Self.root + "/Sources/ImgWarmSupport/EntryOutcome.swift", encoding: .utf8)
        let report = try String(contentsOfFile: Self.root + "/Sources/ImgWarmReport/RunReport.swift", encoding: .utf8)
        let names = Set(outcome.matches(of: #/return "([a-z\-]+)"/#).map { String($0.output.1) }).subtracting(["pending"])
        let keys = Set(report.matches(of: #/\\"([a-z_]+)\\"/#).map { String($0.output.1) })
        #expect(names.count >= 20, "\(names.sorted())")
        #expect(keys.count >= 30, "\(keys.sorted())")
        for name in names.sorted() where !commands.contains("`\(name)`") {
            Issue.record("docs/commands.md does not explain the outcome or error class `\(name)`")
        }
        for key in keys.sorted() where !commands.contains("`\(key)`") {
            Issue.record("docs/commands.md does not explain the report key `\(key)`")
        }
    }
}

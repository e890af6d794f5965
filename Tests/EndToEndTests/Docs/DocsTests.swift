import Foundation
import Testing
import TestSupport

/// The documentation stays true to the repository: README's Layout section
/// names every source and test folder that exists and nothing that does
/// not, every relative link of README, CHANGELOG and docs/ leads somewhere,
/// and README stays a short front door.
@Suite struct DocsTests {
    static let root = BinaryRunner.packageRoot

    static func text(_ path: String) throws -> String {
        try String(contentsOfFile: root + "/" + path, encoding: .utf8)
    }

    /// README's Layout block: each line's path, a nested line (two more
    /// spaces) relative to the folder above it.
    static func layoutPaths(_ readme: String) throws -> [String] {
        let lines = readme.components(separatedBy: "\n")
        let heading = try #require(lines.firstIndex(of: "## Layout"), "README has a ## Layout section")
        let open = try #require(lines[heading...].firstIndex { $0.hasPrefix("```") })
        let close = try #require(lines[(open + 1)...].firstIndex { $0.hasPrefix("```") })
        var parents: [(indent: Int, path: String)] = []
        var paths: [String] = []
        for line in lines[(open + 1)..<close] where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let indent = line.prefix { $0 == " " }.count
            let token = String(line.dropFirst(indent).prefix { $0 != " " })
            // A continuation line (a description wrapped onto the next line) has no path.
            guard token.hasSuffix("/") || token.contains(".") || token == "Dockerfile" else { continue }
            while let last = parents.last, last.indent >= indent { parents.removeLast() }
            let path = (parents.last?.path ?? "") + token
            paths.append(path)
            if token.hasSuffix("/") { parents.append((indent, path)) }
        }
        return paths
    }

    @Test func readmeIsAShortFrontDoor() throws {
        let readme = try Self.text("README.md")
        #expect(readme.components(separatedBy: "\n").count <= 300)
        #expect(readme.contains("scripts/test.sh"), "CI runs README's test command")
        #expect(readme.contains("scripts/demo.sh"))
    }

    @Test(.needsTools("git", for: "listing the tracked folders"))
    func readmeLayoutMatchesTheTree() throws {
        let git = try neededTool("git", for: "listing the tracked folders")
        let listed = try #require(runTool(git, ["-C", Self.root, "ls-files"]))
        try #require(listed.status == 0, "git ls-files: \(listed.output)")
        var folders = Set<String>()
        for file in listed.output.split(separator: "\n") {
            let parts = file.split(separator: "/").dropLast().map(String.init)
            guard !parts.isEmpty, !parts[0].hasPrefix(".") else { continue }
            // Every top-level folder; Sources/* and Tests/*; and two levels
            // inside the library (Sources/ImgWarmCache/Layouts/).
            var depth = 1
            if parts[0] == "Sources" || parts[0] == "Tests" { depth = 2 }
            if parts.count > 1 && parts[0] == "Sources" && parts[1] == "ImgWarmKit" { depth = 4 }
            for d in 1...min(depth, parts.count) { folders.insert(parts.prefix(d).joined(separator: "/") + "/") }
        }
        let paths = try Self.layoutPaths(try Self.text("README.md"))
        let fm = FileManager.default
        for path in paths {
            #expect(fm.fileExists(atPath: Self.root + "/" + path), "README's Layout names \(path), which does not exist")
        }
        let named = Set(paths)
        for folder in folders.sorted() where !named.contains(folder) && folder != "Sources/" && folder != "Tests/" {
            Issue.record("README's Layout does not name \(folder)")
        }
    }

    /// GitHub's anchor for a heading: lower case, punctuation dropped,
    /// spaces as hyphens.
    static func anchor(_ heading: String) -> String {
        String(heading.lowercased().compactMap { c -> Character? in
            if c == " " { return "-" }
            return c.isLetter || c.isNumber || c == "-" || c == "_" ? c : nil
        })
    }

    @Test func relativeLinksLeadSomewhere() throws {
        let fm = FileManager.default
        var pages = ["README.md", "CHANGELOG.md", "bench/README.md"]
        let docs = try #require(fm.enumerator(atPath: Self.root + "/docs"))
        for case let path as String in docs where path.hasSuffix(".md") { pages.append("docs/" + path) }
        let link = try Regex(#"\]\(([^)\s]+)\)"#)
        for page in pages {
            let text = try Self.text(page)
            for match in text.matches(of: link) {
                let target = String(match.output[1].substring ?? "")
                if target.hasPrefix("http://") || target.hasPrefix("https://") { continue }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let here = URL(fileURLWithPath: Self.root + "/" + page)
                let file = parts[0].isEmpty ? here : here.deletingLastPathComponent().appendingPathComponent(parts[0]).standardized
                #expect(fm.fileExists(atPath: file.path), "\(page): \(target) leads nowhere")
                if parts.count == 2, file.pathExtension == "md", let linked = try? String(contentsOf: file, encoding: .utf8) {
                    let anchors = linked.components(separatedBy: "\n").filter { $0.hasPrefix("#") }
                        .map { Self.anchor(String($0.drop { $0 == "#" }.dropFirst())) }
                    #expect(anchors.contains(parts[1]), "\(page): \(target): no such heading in \(file.lastPathComponent)")
                }
            }
        }
    }
}

/// What the resource of a `check` run's telemetry says about the run: the command, and from the
/// usual CI variables where they are set the repository, branch, commit and run, in
/// OpenTelemetry's names (`vcs.*`, `cicd.*`). `OTEL_RESOURCE_ATTRIBUTES` comes after these and
/// wins.
package enum CheckRunResource {
    /// The attributes for a run of `command` in `environment`.
    package static func attributes(command: [String], environment: [String: String]) -> [OTLPConfiguration.Header] {
        func first(_ names: String...) -> String? {
            for name in names { if let value = environment[name], !value.isEmpty { return value } }
            return nil
        }
        var result = [OTLPConfiguration.Header(name: "nodescope.check.command", value: command.joined(separator: " "))]
        var repository = first("CI_PROJECT_URL", "BUILDKITE_REPO", "GIT_URL")
        if let server = first("GITHUB_SERVER_URL"), let name = first("GITHUB_REPOSITORY") { repository = server + "/" + name }
        // A pull request's branch is its head (GITHUB_HEAD_REF), not the merge ref.
        let branch = first("GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME", "BUILDKITE_BRANCH", "BRANCH_NAME", "GIT_BRANCH")
        let commit = first("GITHUB_SHA", "CI_COMMIT_SHA", "BUILDKITE_COMMIT", "GIT_COMMIT")
        let run = first("GITHUB_RUN_ID", "CI_PIPELINE_ID", "BUILDKITE_BUILD_ID", "BUILD_ID")
        for (name, value) in [
            ("vcs.repository.url.full", repository), ("vcs.ref.head.name", branch), ("vcs.ref.head.revision", commit),
            ("cicd.pipeline.run.id", run),
        ] {
            if let value { result.append(OTLPConfiguration.Header(name: name, value: value)) }
        }
        return result
    }
}

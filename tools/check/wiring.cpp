// SPDX-License-Identifier: GPL-2.0-or-later
#include "wiring.hpp"

#include "common/warning_names.hpp"
#include "readers/slurm_syntax.hpp"
#include "readers/value_parsers.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace nvlblock::check {

using namespace tool;
using slurm_syntax::lower;

namespace {

Finding warning(const SourceLocation& where, const std::string& message, const char* name) {
    return {Severity::kWarning, {where, message, name}};
}
Finding note(const SourceLocation& where, const std::string& message) {
    return {Severity::kNote, {where, message}};
}

// The comma-separated words of a setting, lower-cased.
std::vector<std::string> words(const std::string& value) {
    std::vector<std::string> out;
    std::stringstream in(lower(value));
    for (std::string w; std::getline(in, w, ',');)
        if (!w.empty())
            out.push_back(w);
    return out;
}

bool has_word(const std::string& value, const std::string& word) {
    const std::vector<std::string> w = words(value);
    return std::find(w.begin(), w.end(), word) != w.end();
}

// A PreemptMode value frees nodes when it requeues or cancels.
bool mode_frees_nodes(const std::string& mode) {
    return has_word(mode, "requeue") || has_word(mode, "cancel");
}

void plugins_loaded(const SlurmConf& conf, std::vector<Finding>& out) {
    if (!conf.setting("TopologyPlugin"))
        out.push_back(warning({conf.path, 0},
                              "no TopologyPlugin= line: Slurm loads no topology plugin and nvlblock "
                              "never runs; add TopologyPlugin=topology/nvlblock",
                              warning_name::kTopologyPlugin));
    const SlurmSetting* prep = conf.setting("PrEpPlugins");
    if (!prep || !has_word(prep->value, "prep/nvlblock"))
        out.push_back(
            warning(prep ? prep->where : SourceLocation{conf.path, 0},
                    std::string(prep ? "PrEpPlugins=" + prep->value + " lacks prep/nvlblock" : "no PrEpPlugins= line") +
                        ": nvlblock is not told when a job's nodes fail, so a failed job restarts "
                        "wherever Slurm puts it, never held for its rack; add prep/nvlblock (keep "
                        "prep/script where Prolog or Epilog scripts run)",
                    warning_name::kPrepPlugin));
}

void requeue_possible(const SlurmConf& conf, std::vector<Finding>& out) {
    if (const SlurmSetting* s = conf.setting("JobRequeue"); s && s->value == "0")
        out.push_back(warning(s->where,
                              "JobRequeue=0: Slurm requeues a failed batch job only if it was submitted "
                              "with --requeue; the others end, and nvlblock restarts only requeued jobs "
                              "in place",
                              warning_name::kJobRequeue));
    if (!conf.setting("RequeueExit") && !conf.setting("RequeueExitHold"))
        out.push_back(note({conf.path, 0},
                           "no RequeueExit= or RequeueExitHold=: a job that exits after a GPU or NVLink fault on a "
                           "node that stays up ends instead of being requeued, unless its script requeues itself; "
                           "nvlblock restarts only requeued jobs (docs/admin.md 4.5)"));
}

bool any_block(const Topology& t, bool (*pred)(const BlockSettings&)) {
    return std::any_of(t.blocks().begin(), t.blocks().end(), [&](const Block& b) { return pred(b.settings); });
}

// Lent work leaves a spare only when Slurm preempts it for the failed job.
void lending_possible(const Topology& t, const SlurmConf& conf, std::vector<Finding>& out) {
    if (!any_block(t, [](const BlockSettings& s) { return s.lending && s.reserve == SpareReserve::kIdle; }))
        return;
    std::string why;
    if (!slurm_preemption_frees_nodes(conf, why))
        out.push_back(warning({t.source(), 0},
                              "lending: true, but " + why +
                                  ": work lent a spare keeps it when a job fails, so the failed "
                                  "job waits or restarts elsewhere",
                              warning_name::kLendingFreesNothing));
}

// Every partition a selector names is one slurm.conf defines (QOS and
// accounts live in slurmdbd: not checked here).
void selector_partitions(const Topology& t, const SlurmConf& conf, std::vector<Finding>& out) {
    std::set<std::string> defined;
    for (const SlurmPartition& p : conf.partitions)
        defined.insert(p.name);
    const RecoveryPolicy& r = t.policy().recovery;
    for (const auto& [setting, selector] :
         {std::pair{"preemptible", &t.policy().preemptible}, std::pair{"recovery.reclaim_from", &r.reclaim_from},
          std::pair{"recovery.never_reclaim", &r.never_reclaim}})
        for (const std::string& name : selector->partitions) {
            if (defined.count(name))
                continue;
            std::string m = std::string(setting) + " names partition '" + name + "', which slurm.conf does not define";
            if (auto hint = closest_word(name, defined))
                m += " (did you mean '" + *hint + "'?)";
            out.push_back(warning({t.source(), 0}, m + ": it selects no job", warning_name::kSelectsNothing));
        }
}

} // namespace

bool judges_wiring(const SlurmConf& conf) {
    return conf.setting("SlurmctldHost") || conf.setting("ControlMachine");
}

bool slurm_preemption_frees_nodes(const SlurmConf& conf, std::string& why) {
    const SlurmSetting* type = conf.setting("PreemptType");
    const SlurmSetting* mode = conf.setting("PreemptMode");
    if (!type || lower(type->value) == "preempt/none") {
        why = "PreemptType is " + std::string(type ? "preempt/none" : "not set");
        return false;
    }
    const std::string m = mode ? lower(mode->value) : "off";
    if (has_word(m, "off")) {
        why = "PreemptMode is OFF";
        return false;
    }
    const bool partition_frees = std::any_of(conf.partitions.begin(), conf.partitions.end(),
                                             [](const SlurmPartition& p) { return mode_frees_nodes(p.preempt_mode); });
    if (!mode_frees_nodes(m) && !partition_frees) {
        why = "PreemptMode=" + mode->value + " keeps a preempted job on its nodes (only REQUEUE or CANCEL free them)";
        return false;
    }
    why = "PreemptType=" + type->value + ", PreemptMode=" + mode->value;
    return true;
}

std::vector<Finding> wiring_findings(const Topology& t, const SlurmConf& conf) {
    std::vector<Finding> out;
    if (!judges_wiring(conf))
        return out;
    plugins_loaded(conf, out);
    requeue_possible(conf, out);
    lending_possible(t, conf, out);
    selector_partitions(t, conf, out);
    return out;
}

} // namespace nvlblock::check

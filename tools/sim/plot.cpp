// SPDX-License-Identifier: GPL-2.0-or-later
#include "plot.hpp"

#include <cstdio>
#include <fstream>
#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

namespace nvlblock::sim {

namespace {

std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "\"";
}

std::string basename_of(const std::string& p) {
    const auto slash = p.find_last_of('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

} // namespace

std::string gnuplot_script(const std::string& prefix, const std::string& dat, const std::string& title,
                           const std::vector<PolicyResult>& results) {
    const std::size_t n = results.size();
    std::string s;
    s += "# nvlblock-sim plot script; redraw with: gnuplot " + basename_of(prefix) + ".gp\n";
    s += "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
         "  set terminal pngcairo size 1100,560 font 'sans,10'\n"
         "} else {\n"
         "  set terminal png size 1100,560\n"
         "}\n";
    s += "set datafile separator whitespace\nset key outside right top\nset grid\n";
    s += "set xlabel 'time (hours)'\n";
    auto plot = [&](const char* png, const char* ylabel, const char* fmt, std::size_t first_col, const char* yrange) {
        s += "set output " + quoted(prefix + png) + "\n";
        s += std::string("set ylabel '") + ylabel + "'\n";
        s += std::string("set format y '") + fmt + "'\n";
        s += std::string("set yrange ") + yrange + "\n";
        s += "set title " + quoted(title) + " noenhanced\n";
        s += "plot ";
        for (std::size_t i = 0; i < n; ++i) {
            if (i)
                s += ", \\\n     ";
            // Distinct dashes as well as colours: identical curves stay visible.
            s += quoted(dat) + " using 1:" + std::to_string(first_col + i) + " with lines lw 1.8 dt " +
                 std::to_string(i + 1) + " title " + quoted(results[i].policy.name) + " noenhanced";
        }
        s += "\nunset output\n";
    };
    plot("-utilization.png", "utilization of healthy nodes", "%.0f%%", 2, "[0:105]");
    plot("-stranded.png", "stranded healthy nodes", "%.0f", 2 + n, "[0:*]");
    plot("-goodput.png", "useful work / healthy capacity", "%.0f%%", 2 + 2 * n, "[0:105]");
    return s;
}

std::string write_plots(const std::string& prefix, const std::string& title, const std::vector<PolicyResult>& results) {
    if (results.empty())
        return "";
    const std::string dat = prefix + ".dat", gp = prefix + ".gp";
    {
        std::ofstream out(dat);
        if (!out)
            return "cannot write " + dat;
        out << "# t_hours";
        for (const char* what : {"utilization_pct", "stranded_nodes", "goodput_pct"})
            for (const auto& r : results)
                out << ' ' << r.policy.name << ':' << what;
        out << '\n';
        const std::size_t points = results.front().series.size();
        char buf[64];
        for (std::size_t i = 0; i < points; ++i) {
            const SeriesPoint& p0 = results.front().series[i];
            std::snprintf(buf, sizeof buf, "%.4f", static_cast<double>(p0.start + p0.end) / 2.0 / 3600.0);
            out << buf;
            for (int what = 0; what < 3; ++what)
                for (const auto& r : results) {
                    const SeriesPoint& p = r.series[i];
                    double v = 0;
                    if (what == 0)
                        v = p.healthy > 0 ? 100.0 * p.busy / p.healthy : 0.0;
                    else if (what == 1)
                        v = p.stranded;
                    else
                        v = p.healthy > 0 ? 100.0 * p.useful / p.healthy : 0.0;
                    std::snprintf(buf, sizeof buf, " %.3f", v);
                    out << buf;
                }
            out << '\n';
        }
    }
    {
        std::ofstream out(gp);
        if (!out)
            return "cannot write " + gp;
        out << gnuplot_script(prefix, dat, title, results);
    }
    pid_t pid = 0;
    char arg0[] = "gnuplot";
    std::string script = gp;
    char* argv[] = {arg0, script.data(), nullptr};
    if (posix_spawnp(&pid, "gnuplot", nullptr, nullptr, argv, environ) != 0)
        return "cannot run gnuplot (install gnuplot-nox); the data and script are in " + dat + " and " + gp;
    int status = 0;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return "gnuplot failed on " + gp;
    return "";
}

} // namespace nvlblock::sim

"""Bash commands that got past other agents' permission rules, and what ours decide for each.

Each row: the command, the rules in force, the permission mode, and the action `decide` must give
(headless, an "ask" is a denial). `source` names where the bypass was published: an issue of
Claude Code (cc#), Codex (codex#), Gemini CLI (gemini#), opencode (opencode#), another agent's
tracker, or issue 18 of this project. Rows marked `run=False` name a real binary by absolute path (or
start a login shell, which runs the machine's profile), so tests/tools/test_rule_bypasses.py does
not run them in bash to check the reading.
"""

from __future__ import annotations

from dataclasses import dataclass

ECHO = ("Bash(echo:*)",)
GIT_DIFF = ("Bash(git diff:*)",)
SECRETS = ("Edit(secrets/**)",)
RM = ("Bash(rm:*)",)


@dataclass(frozen=True)
class Case:
    command: str
    expect: str  # allow / ask / deny, in `mode`
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    mode: str = "ask"
    source: str = ""
    links: tuple[tuple[str, str], ...] = ()  # symlinks made in the workspace first: (link, target)
    run: bool = True  # real bash may run it (stand-ins for every program) to check the reading

    @property
    def id(self) -> str:
        rules = " ".join([*self.allow, *(f"!{d}" for d in self.deny), *(f"?{a}" for a in self.ask)])
        return f"{self.mode}|{rules}|{self.command}"[:110]


def allow(command: str, *rules: str, **kw) -> Case:
    return Case(command, "allow", rules, **kw)


def ask(command: str, *rules: str, **kw) -> Case:
    return Case(command, "ask", rules, **kw)


def deny(command: str, *rules: str, **kw) -> Case:
    return Case(command, "deny", rules, **kw)


# fmt: off
CASES: list[Case] = [
    # -- issue 18's own examples -------------------------------------------------------------------
    ask("echo ${x:-$(touch pwned)}", *ECHO, source="issue 18"),
    ask("echo ${x:=$(touch pwned)}", *ECHO, source="issue 18"),
    ask('echo "${a[$(touch pwned)]}"', *ECHO, source="issue 18"),
    ask("echo $(( $(touch pwned) ))", *ECHO, source="issue 18"),
    ask("echo $((a[$(touch pwned)]))", *ECHO, source="issue 18"),
    ask("cat <<EOF\n$(touch pwned)\nEOF", "Bash(cat:*)", source="issue 18"),
    ask("echo hi <<EOF\n`touch pwned`\nEOF", *ECHO, source="issue 18"),
    ask('echo "`touch pwned`"', *ECHO, source="issue 18"),
    ask("echo $(echo $(touch pwned))", *ECHO, source="issue 18"),
    ask("GIT_EXTERNAL_DIFF='touch pwned #' git diff", *GIT_DIFF, source="issue 18"),
    ask("echo x > src/cfg", *ECHO, "Edit(src/**)", links=(("src/cfg", "../.git/config"),), source="issue 18"),
    deny("git diff --output=x.txt", *GIT_DIFF, mode="plan", source="issue 18"),
    deny("echo ${x:-$(touch pwned)}", *ECHO, mode="plan", source="issue 18"),
    allow("git diff HEAD~1 -- src", *GIT_DIFF, mode="plan", source="issue 18"),
    # -- item 9: a deny rule sees a redirect's target ------------------------------------------------
    deny("echo x > secrets/key", *ECHO, deny=SECRETS, source="issue 18 item 9"),
    deny("echo x > secrets/key", *ECHO, deny=SECRETS, mode="auto-edit", source="issue 18 item 9"),
    deny("echo x >> secrets/key", *ECHO, deny=SECRETS, mode="yolo", source="issue 18 item 9"),
    deny("echo x 2> secrets/key", *ECHO, deny=SECRETS, mode="auto-edit", source="issue 18 item 9"),
    deny("echo x &> secrets/key", *ECHO, deny=SECRETS, mode="auto-edit", source="issue 18 item 9"),
    deny("echo x >| ./secrets/../secrets/key", *ECHO, deny=SECRETS, mode="auto-edit", source="issue 18 item 9"),
    deny("echo x > out", *ECHO, deny=SECRETS, mode="auto-edit", links=(("out", "secrets/key"),), source="issue 18"),
    deny("cat < .env", "Bash(cat:*)", deny=("Read(.env)",), source="opencode#26042"),
    deny("cat < notes", "Bash(cat:*)", deny=("Read(.env)",), links=(("notes", ".env"),), source="opencode#26042"),
    ask("cd secrets && echo x > key", *ECHO, "Bash(cd:*)", deny=SECRETS, mode="auto-edit", source="issue 18"),
    ask("echo x > secret?/key", *ECHO, deny=SECRETS, mode="auto-edit", source="issue 18"),
    ask("echo x > $HOME/.bashrc", *ECHO, mode="auto-edit", source="issue 18"),
    # -- item 9: a call that matches ask and deny is refused -----------------------------------------
    deny("rm -rf build", ask=RM, deny=("Bash(rm -rf:*)",), source="issue 18 item 9"),
    deny("rm -rf build", "Bash", ask=RM, deny=("Bash(rm -rf:*)",), mode="yolo", source="issue 18 item 9"),
    ask("rm build", "Bash", ask=RM, deny=("Bash(rm -rf:*)",), mode="yolo", source="issue 18 item 9"),
    # -- lists, pipelines, newlines ------------------------------------------------------------------
    ask('echo "test" && ls', "Bash(echo *)", source="cc#4956"),
    ask("echo test; ls", "Bash(echo *)", source="cc#4956"),
    ask("echo test || ls", "Bash(echo *)", source="cc#4956"),
    ask("echo test | sh", "Bash(echo *)", source="cc#4956"),
    ask("echo test & touch pwned", "Bash(echo *)", source="cc#4956"),
    ask("echo test\ntouch pwned", *ECHO, source="dyad#2305"),
    ask("cd /tmp && python3 script.py", "Bash(cd:*)", source="cc#28784"),
    ask("git log; touch pwned", "Bash(git log:*)", source="cc#94314"),
    ask("git log && git push", "Bash(git log:*)", "Bash(git blame:*)", source="cc#94314"),
    ask("true && rm important_file.txt", "Bash(true)", source="gemini#11766"),
    ask("cat file.txt | wc -l", "Bash(cat:*)", source="gemini#11510"),
    ask("ls > out.txt", "Bash(ls:*)", source="gemini#11766"),
    ask("cat <<'EOF' | pandoc --to=plain\nx\nEOF", "Bash(cat:*)", ask=("Bash(pandoc:*)",), mode="yolo", source="cc#58904"),
    # -- deny rules through spelling, paths, wrappers ------------------------------------------------
    deny("rm  -rf  /", deny=("Bash(rm -rf /)",), mode="yolo", source="gemini#2599"),
    deny("rm -rf / # comment", deny=("Bash(rm -rf /)",), mode="yolo", source="gemini#2599"),
    deny("/bin/rm -rf x", deny=RM, mode="yolo", source="gemini#2599", run=False),
    deny("/usr/bin/sudo -n id -u", deny=("Bash(sudo:*)",), mode="yolo", source="hermes#104308", run=False),
    deny("sud\\o -n id -u", deny=("Bash(sudo:*)",), mode="yolo", source="hermes#104308"),
    deny('bash -c "sudo -n id -u"', deny=("Bash(sudo:*)",), mode="yolo", source="hermes#104308"),
    deny("\\rm x", deny=RM, mode="yolo", source="clawcodex#626"),
    deny("r''m x", deny=RM, mode="yolo", source="clawcodex#626"),
    deny("$'\\x72\\x6d' -rf x", deny=RM, mode="yolo", source="ANSI-C quoting"),
    deny("timeout 5 git add -A", deny=("Bash(git add -A:*)",), mode="yolo", source="cc#92542"),
    deny("nice -n 5 git add -A", deny=("Bash(git add -A:*)",), mode="yolo", source="cc#92542"),
    deny("env git add -A", deny=("Bash(git add -A:*)",), mode="yolo", source="cc#92542"),
    deny("FOO=1 rm -rf x", deny=RM, mode="yolo", source="cc#31558"),
    deny("LC_ALL=C rm -rf x", deny=RM, mode="yolo", source="dcg#231"),
    deny('echo "$(rm -rf x)"', deny=RM, mode="yolo", source="clawcodex#626"),
    deny("timeout -s KILL 5 rm x", deny=RM, mode="yolo", source="clawcodex#626"),
    deny("bash -c 'rm -rf x'", deny=RM, mode="yolo", source="cc#43085"),
    deny('sh -c "rm x"', deny=RM, mode="yolo", source="openclaw#61509"),
    deny("eval rm x", deny=RM, mode="yolo", source="crush#3425"),
    deny('eval "curl --version"', deny=("Bash(curl:*)",), mode="yolo", source="crush#3425"),
    deny("command curl --version", deny=("Bash(curl:*)",), mode="yolo", source="crush#3425"),
    ask("CMD=curl; $CMD --version", deny=("Bash(curl:*)",), mode="yolo", source="crush#3425"),
    deny("find . -exec rm {} \\;", deny=RM, mode="yolo", source="picobot#21"),
    deny("xargs rm < list", deny=RM, mode="yolo", source="cc#92542"),
    deny("sudo rm x", deny=RM, mode="yolo", source="cc#92542"),
    deny("stdbuf -oL nohup rm x", deny=RM, mode="yolo", source="cc#92542"),
    deny("exec rm x", deny=RM, mode="yolo", source="cc#92542"),
    deny("su -c 'rm x' root", deny=RM, mode="yolo", source="cc#92542"),
    deny("flock lockfile rm x", deny=RM, mode="yolo", source="cc#92542"),
    deny("setsid rm x", deny=RM, mode="yolo", source="cc#92542"),
    deny("trap 'rm x' EXIT", deny=RM, mode="yolo", source="trap action"),
    deny("watch -n1 'rm x'", deny=RM, mode="yolo", source="watch runs sh -c"),
    deny("FOO[$(rm x)]=1 true", deny=RM, mode="yolo", source="openclaude#1111"),
    deny("[[ -f x ]] && rm x", deny=RM, mode="yolo", source="unparseable line"),
    ask("(( 1 )) && touch x", deny=RM, mode="yolo", source="unparseable line"),
    ask("{rm,-rf,x}", deny=RM, mode="yolo", source="brace expansion"),
    ask("/bin/r? -rf x", deny=RM, mode="yolo", source="glob command name", run=False),
    deny("git --no-pager -C . push origin", deny=("Bash(git push:*)",), mode="yolo", source="git's global options"),
    deny("FOO=1 /usr/bin/git -C . push", deny=("Bash(git push:*)",), mode="yolo", source="git's global options", run=False),
    deny("ssh -V", deny=("Bash(ssh:*)",), mode="yolo", source="dotfiles#444"),
    deny("bash -c 'ssh host'", deny=("Bash(ssh:*)",), mode="yolo", source="dotfiles#444"),
    deny(">$(echo <(true) tail >/dev/null; printf /dev/null) /sbin/shutdown -h now", deny=("Bash(shutdown:*)",), mode="yolo", source="hermes#82830", run=False),
    # -- substitutions the rules must see ------------------------------------------------------------
    ask('echo "$(rm -rf x)"', *ECHO, source="clawcodex#626"),
    ask("git status $(touch pwned)", "Bash(git status:*)", source="reasonix#6968"),
    ask("echo hi > $(touch pwned)", *ECHO, source="pi-packages#741"),
    ask("cat < <(touch pwned)", "Bash(cat:*)", source="pi-packages#741"),
    ask("echo hi 2> `touch pwned`", *ECHO, source="pi-packages#741"),
    ask("echo x > >(touch pwned)", *ECHO, source="process substitution"),
    ask("diff <(touch pwned) x", "Bash(diff:*)", source="process substitution"),
    ask(">$(echo <(true) tail >/dev/null; printf /dev/null) touch pwned", *ECHO, "Bash(printf:*)", "Bash(true)", "Bash(tail:*)", source="hermes#82830"),
    ask('echo "$(whoami)"', *ECHO, source="orchestkit#4216"),
    ask("FOO[$(touch pwned)]=val echo hi", *ECHO, source="openclaude#1111"),
    ask("a[$(touch pwned)]=1", *ECHO, source="openclaude#1111"),
    ask("echo $'\\' '; touch pwned; #'", *ECHO, source="ANSI-C quoting"),
    ask("echo a#$(touch pwned)", *ECHO, source="comments"),
    ask("echo a\\ #$(touch pwned)", *ECHO, source="an escaped blank: # is not a comment there"),
    ask("read PATH < list; git diff", *GIT_DIFF, "Bash(read:*)", source="read into PATH"),
    ask("printf -v PATH %s .; git diff", *GIT_DIFF, "Bash(printf:*)", source="printf -v PATH"),
    ask("cat${IFS}x", "Bash(cat:*)", source="cc IFS check"),
    # -- expansions that evaluate a value ------------------------------------------------------------
    ask("x='$(touch pwned)'; echo ${x@P}", *ECHO, source="prompt expansion"),
    ask("x='a[$(touch pwned)]'; echo ${!x}", *ECHO, source="indirect expansion"),
    ask("x='a[$(touch pwned)]'; echo $((x))", *ECHO, source="arithmetic on a value"),
    ask("for x in $(cat f); do echo $((x)); done", *ECHO, "Bash(cat:*)", source="arithmetic on a value"),
    ask("x='a[$(touch pwned)]'; a=(1); echo ${a[x]}", *ECHO, source="subscript on a value"),
    ask("x='a[$(touch pwned)]'; echo ${s:x}", *ECHO, source="offset on a value"),
    ask("printf -v 'a[$(touch pwned)]' x", "Bash(printf:*)", source="printf -v subscript"),
    ask("test -v 'a[$(touch pwned)]'", "Bash(test:*)", source="test -v subscript"),
    ask("declare -n r='a[$(touch pwned)]'; echo $r", *ECHO, "Bash(declare:*)", source="nameref"),
    ask("read 'a[$(touch pwned)]' <<< x", "Bash(read:*)", source="read into a subscript"),
    ask("let 'x=a[$(touch pwned)]'", "Bash(let:*)", source="let"),
    # -- environment assignments ---------------------------------------------------------------------
    ask("GIT_PAGER='touch pwned' git diff", *GIT_DIFF, source="issue 18"),
    ask("PAGER='touch pwned' git log", "Bash(git log:*)", source="issue 18"),
    ask("EDITOR='touch pwned' git commit", "Bash(git commit:*)", source="issue 18"),
    ask("PATH=.:$PATH git diff", *GIT_DIFF, source="issue 18"),
    ask("LD_PRELOAD=./evil.so ls", "Bash(ls:*)", source="issue 18"),
    ask("BASH_ENV=./evil.sh bash -c true", "Bash(true)", "Bash(bash:*)", source="issue 18"),
    ask("PYTHONSTARTUP=evil.py python -i", "Bash(python:*)", source="issue 18"),
    ask("NODE_OPTIONS='--require ./evil.js' node x.js", "Bash(node:*)", source="issue 18"),
    ask("PERL5OPT=-Mevil perl x.pl", "Bash(perl:*)", source="issue 18"),
    ask("LESSOPEN='|touch pwned %s' less f", "Bash(less:*)", source="issue 18"),
    ask("IFS=/ echo x", *ECHO, source="issue 18"),
    ask("PROMPT_COMMAND='touch pwned' bash -i", "Bash(bash:*)", source="issue 18"),
    ask("HOME=. git diff", *GIT_DIFF, source="a git config read from the workspace"),
    ask("env GIT_EXTERNAL_DIFF='touch pwned #' git diff", *GIT_DIFF, "Bash(env:*)", source="issue 18"),
    ask("export GIT_EXTERNAL_DIFF='touch pwned #'; git diff", *GIT_DIFF, "Bash(export:*)", source="issue 18"),
    ask("GIT_EXTERNAL_DIFF='touch pwned #'; export GIT_EXTERNAL_DIFF; git diff", *GIT_DIFF, "Bash(export:*)", source="issue 18"),
    ask("for PATH in .; do git diff; done", *GIT_DIFF, source="a loop variable"),
    ask("FOO=1 git diff", *GIT_DIFF, source="issue 18"),
    allow("FOO=1 git diff", "Bash(FOO=1 git diff:*)", source="issue 18"),
    allow("LANG=C git diff", *GIT_DIFF, source="harmless assignment"),
    allow("GIT_PAGER=cat git log", "Bash(GIT_PAGER=cat git log)", source="an exact rule is the person's yes"),
    # -- functions, aliases, definitions -------------------------------------------------------------
    ask("git() { touch pwned; }; git diff", *GIT_DIFF, source="function shadowing"),
    ask("alias echo='touch pwned'", *ECHO, "Bash(alias:*)", source="alias"),
    ask("trap 'touch pwned' EXIT; echo hi", *ECHO, "Bash(trap:*)", source="trap action"),
    # -- programs that run other programs ------------------------------------------------------------
    ask("find . -exec rm {} +", "Bash(find:*)", source="orchestkit#4216"),
    ask("find . -e\\xec touch pwned \\;", "Bash(find:*)", source="codex#20277"),
    ask("find . -delete", "Bash(find:*)", source="orchestkit#4216"),
    ask("find . -name *.py", "Bash(find:*)", source="cc glob could expand to -delete"),
    allow("find . -name '*.py' -newer setup.py", "Bash(find:*)", source="a read-only find"),
    ask("echo x | xargs rm", *ECHO, "Bash(xargs:*)", source="xargs"),
    allow("ls | xargs echo", *ECHO, "Bash(ls:*)", source="xargs runs what is allowed"),
    ask("echo '-exec touch pwned ;' | xargs find .", *ECHO, "Bash(find:*)", "Bash(xargs:*)", source="xargs adds options"),
    ask("echo touch pwned | xargs env", *ECHO, "Bash(env:*)", "Bash(xargs:*)", source="xargs adds a command"),
    ask("env sh -c 'rm -rf x'", "Bash(env:*)", source="gumroad-mobile#194"),
    ask("env -S 'rm x'", "Bash(env:*)", source="env -S"),
    ask("sudo rm -rf x", "Bash(sudo:*)", source="sudo"),
    deny("sudo -s 'rm x; id'", "Bash(sudo:*)", deny=RM, mode="yolo", source="sudo -s runs a shell line"),
    ask("watch -n1 'touch pwned'", "Bash(watch:*)", source="watch runs sh -c"),
    ask("zsh -c 'echo hi'", *ECHO, "Bash(zsh:*)", source="another shell's syntax"),
    ask("exec touch pwned", "Bash(exec:*)", source="exec"),
    ask("nohup touch pwned &", "Bash(nohup:*)", source="nohup"),
    ask("git -c alias.x='!touch pwned' x", "Bash(git:*)", source="picobot#21"),
    ask("git -c core.pager='touch pwned' log", "Bash(git:*)", source="git -c"),
    ask("git grep --open-files-in-pager='touch pwned' x", "Bash(git grep:*)", source="dd-sdk-android#3745"),
    ask("git grep -O'touch pwned' x", "Bash(git grep:*)", source="dd-sdk-android#3745"),
    ask("git diff --ext-diff", *GIT_DIFF, source="git diff --ext-diff"),
    ask("git rebase -x 'touch pwned' HEAD~1", "Bash(git rebase:*)", source="git rebase --exec"),
    ask("git fetch --upload-pack='touch pwned' origin", "Bash(git fetch:*)", source="git --upload-pack"),
    ask("git submodule foreach 'touch pwned'", "Bash(git submodule:*)", source="git submodule foreach"),
    ask("sort --compress-program=sh x", "Bash(sort:*)", source="openclaw sort"),
    ask("sort -o out x", "Bash(sort:*)", source="sort -o"),
    allow("sort -u x", "Bash(sort:*)", source="a read-only sort"),
    ask("sed -i s/a/b/ f", "Bash(sed:*)", source="cc sed GHSA"),
    ask("sed 's/a/b/w out' f", "Bash(sed:*)", source="cc sed GHSA"),
    ask("sed '1e touch pwned' f", "Bash(sed:*)", source="cc sed GHSA"),
    ask("sed -l 80 '1e touch pwned' f", "Bash(sed:*)", source="an option's value before the script"),
    ask("awk -F : 'BEGIN{system(\"touch pwned\")}'", "Bash(awk:*)", source="an option's value before the program"),
    allow("sed -n '1,3p' README.md", "Bash(sed:*)", source="cc#55313"),
    ask("./sed -n 1p f", "Bash(sed:*)", source="codex#28732"),
    ask("awk 'BEGIN{system(\"touch pwned\")}'", "Bash(awk:*)", source="awk system"),
    allow("awk '{print $1}' f", "Bash(awk:*)", source="a read-only awk"),
    ask("tar -cf x.tar --checkpoint=1 --checkpoint-action=exec='touch pwned' .", "Bash(tar:*)", source="tar"),
    ask("tar -I 'touch pwned' -cf x.tar .", "Bash(tar:*)", source="tar -I"),
    ask("rg --pre ./evil.sh x", "Bash(rg:*)", source="rg --pre"),
    ask("zip x.zip f -T -TT 'touch pwned'", "Bash(zip:*)", source="zip -TT"),
    ask("rsync -e 'touch pwned' a b:", "Bash(rsync:*)", source="rsync -e"),
    ask("ssh -o ProxyCommand='touch pwned' h", "Bash(ssh:*)", source="ssh -o"),
    ask("man -P 'touch pwned' ls", "Bash(man:*)", source="man -P"),
    # -- compound commands ---------------------------------------------------------------------------
    ask("if true; then touch pwned; fi", "Bash(true)", source="compound"),
    ask("while read l; do touch pwned; done < list", "Bash(read:*)", source="compound"),
    ask("case x in x) touch pwned;; esac", *ECHO, source="compound"),
    ask("(touch pwned)", *ECHO, source="subshell"),
    ask("{ echo hi; touch pwned; }", *ECHO, source="group"),
    ask("coproc touch pwned", *ECHO, source="coproc"),
    ask("time touch pwned", *ECHO, source="time"),
    # -- what stays allowed --------------------------------------------------------------------------
    allow("echo hi # $(touch pwned)", *ECHO, source="a comment runs nothing"),
    allow("echo hi #; touch pwned", *ECHO, source="a comment runs nothing"),
    allow("echo '$(touch pwned)' \"\\$(touch pwned)\" 'a && b'", *ECHO, source="quoted text runs nothing"),
    allow("cat <<'EOF'\n$(touch pwned)\nEOF", "Bash(cat:*)", source="openclaw#68854"),
    allow("cat > f.py <<'EOF'\nprint('$(x)')\nEOF", "Bash(cat:*)", mode="auto-edit", source="a quoted here-doc"),
    allow("echo ${HOME} ${#x} ${x:-default} ${x:0:2} $((1 + 2))", *ECHO, source="plain expansions"),
    allow("timeout 60 echo hi", *ECHO, source="a transparent wrapper"),
    allow("bash -c 'echo hi | echo there'", *ECHO, source="bash -c of allowed commands"),
    allow("/bin/sh -lc 'cd scripts && ./run.sh'", "Bash(cd:*)", "Bash(./run.sh:*)", source="openclaw#61509", run=False),
    allow("env LANG=C git diff", *GIT_DIFF, source="env with a harmless assignment"),
    allow("command -v git", "Bash(command:*)", source="a query runs nothing"),
    allow("echo x > /dev/null 2>&1", *ECHO, source="harmless redirects"),
    allow("echo x > out/f.txt", *ECHO, "Edit(out/**)", source="a redirect an Edit rule allows"),
]
# fmt: on

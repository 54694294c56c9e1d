package readmetest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

var (
	// fence is a fenced code block, whose text holds no links.
	fence = regexp.MustCompile("(?ms)^```.*?^```[ \t]*$")
	// codeSpan is inline code, such as `a[i](x)`.
	codeSpan = regexp.MustCompile("`[^`\n]*`")
	// link is a Markdown link or image: [text](target) or [text](target "title").
	link = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// scheme starts an absolute URL (https:, mailto:), which is not checked.
	scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// BrokenLinks returns, for each Markdown file of files, every relative link
// (outside code) whose file does not exist, or whose #anchor names no
// heading of the Markdown file it leads to, as "file: target: why".
func BrokenLinks(files []string) ([]string, error) {
	var broken []string
	for _, file := range files {
		doc, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		text := codeSpan.ReplaceAllString(fence.ReplaceAllString(string(doc), ""), "")
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if scheme.MatchString(target) {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
			}
			if _, err := os.Stat(dest); err != nil {
				broken = append(broken, fmt.Sprintf("%s: %s: no such file", file, target))
				continue
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			anchors, err := headingAnchors(dest)
			if err != nil {
				return nil, err
			}
			if !anchors[anchor] {
				broken = append(broken, fmt.Sprintf("%s: %s: %s has no heading #%s", file, target, dest, anchor))
			}
		}
	}
	return broken, nil
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown file: lower case, spaces as hyphens, punctuation dropped, and
// -1, -2, … after a repeated one.
func headingAnchors(file string) (map[string]bool, error) {
	doc, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(fence.ReplaceAllString(string(doc), ""), "\n") {
		title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") {
			continue
		}
		var slug strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(title)) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				slug.WriteRune(r)
			}
		}
		a := slug.String()
		if n := seen[a]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors, nil
}

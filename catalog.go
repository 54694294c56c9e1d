package kindkit

import (
	"fmt"
	"slices"
)

// Catalog is the set of kinds a server hosts, looked up by wire name, raise
// tool name or capability. A catalog may join the kinds of several sources:
// kindkit's built-in kinds (kinds.All) beside a module's own (its
// generated All), each Named, or only some of them (Only). It may also
// keep earlier versions of its kinds (KeepEarlier), which ask nothing new
// but take the answers of the cards they asked before a deploy.
type Catalog struct {
	source  string // the source Named gave; "" when joined or unnamed
	kinds   []Kind
	from    []string // per kind, its source, for the errors of Join
	byName  map[string]Kind
	byTool  map[string]Kind
	earlier map[string][]Kind // wire name → its earlier versions kept
}

// NewCatalog checks that no two kinds share a name or a tool name.
func NewCatalog(kinds ...Kind) (*Catalog, error) {
	c := &Catalog{byName: map[string]Kind{}, byTool: map[string]Kind{}}
	for _, k := range kinds {
		if err := c.add(k, ""); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Named returns c with its kinds named as from source, for the errors of
// Join: "kindkit" for kinds.All, a module's name for its own.
func (c *Catalog) Named(source string) *Catalog {
	cp := *c
	cp.source, cp.from = source, make([]string, len(c.kinds))
	for i := range cp.from {
		cp.from[i] = source
	}
	return &cp
}

// add adds k, from source, unless its name or tool is taken.
func (c *Catalog) add(k Kind, source string) error {
	d := k.Descriptor()
	for i, other := range c.kinds {
		od := other.Descriptor()
		what := ""
		switch {
		case od.Name == d.Name:
			what = fmt.Sprintf("named %q", d.Name)
		case od.ToolName == d.ToolName && d.ToolName != "":
			what = fmt.Sprintf("with tool %q", d.ToolName)
		default:
			continue
		}
		if c.from[i] == source {
			return fmt.Errorf("catalog: two kinds %s%s", what, in(source))
		}
		return fmt.Errorf("catalog: a kind %s%s and one%s", what, in(c.from[i]), in(source))
	}
	c.kinds = append(c.kinds, k)
	c.from = append(c.from, source)
	c.byName[d.Name] = k
	if d.ToolName != "" { // "": only host code asks it
		c.byTool[d.ToolName] = k
	}
	return nil
}

// KeepEarlier returns c that also keeps earlier versions of its kinds: a
// card that one of them asked before a deploy (its version differs from
// the kind's now) is shown and validated as it was asked. An earlier
// version is offered to nobody: it has no raise tool, and Kinds and Kind
// return the current one. Each must be of a kind c has, and of a version
// other than the current one's.
func (c *Catalog) KeepEarlier(kinds ...Kind) (*Catalog, error) {
	cp := *c
	cp.earlier = map[string][]Kind{}
	for name, ks := range c.earlier {
		cp.earlier[name] = slices.Clone(ks)
	}
	for _, k := range kinds {
		d := k.Descriptor()
		current, ok := c.byName[d.Name]
		if !ok {
			return nil, fmt.Errorf("catalog: keep an earlier version of %q: no kind named so%s", d.Name, in(c.source))
		}
		if current.Descriptor().Version == d.Version {
			return nil, fmt.Errorf("catalog: keep an earlier version of %q: version %s is the current one", d.Name, d.Version)
		}
		if _, ok := cp.Version(d.Name, d.Version); ok {
			continue // kept already
		}
		cp.earlier[d.Name] = append(cp.earlier[d.Name], k)
	}
	return &cp, nil
}

// Version returns the kind with this wire name at this version: the
// current one, or an earlier one kept (KeepEarlier).
func (c *Catalog) Version(name, version string) (Kind, bool) {
	if k, ok := c.byName[name]; ok && k.Descriptor().Version == version {
		return k, true
	}
	for _, k := range c.earlier[name] {
		if k.Descriptor().Version == version {
			return k, true
		}
	}
	return nil, false
}

func in(source string) string {
	if source == "" {
		return ""
	}
	return " in " + source
}

// Join returns one catalog of the kinds of cs, in order: kindkit's
// built-in kinds and a module's own, say. A wire name or raise tool that
// two of them define is an error that names both sources.
func Join(cs ...*Catalog) (*Catalog, error) {
	c := &Catalog{byName: map[string]Kind{}, byTool: map[string]Kind{}}
	var earlier []Kind
	for _, src := range cs {
		for i, k := range src.kinds {
			if err := c.add(k, src.from[i]); err != nil {
				return nil, err
			}
			earlier = append(earlier, src.earlier[k.Descriptor().Name]...)
		}
	}
	return c.keep(earlier)
}

// keep is KeepEarlier of c, made here, when there are any to keep.
func (c *Catalog) keep(earlier []Kind) (*Catalog, error) {
	if len(earlier) == 0 {
		return c, nil
	}
	return c.KeepEarlier(earlier...)
}

// Only returns the catalog of c's kinds with these wire names, in c's
// order; a name that c has not is an error.
func (c *Catalog) Only(names ...string) (*Catalog, error) {
	for _, n := range names {
		if _, ok := c.byName[n]; !ok {
			return nil, fmt.Errorf("catalog: no kind named %q%s", n, in(c.source))
		}
	}
	out := &Catalog{source: c.source, byName: map[string]Kind{}, byTool: map[string]Kind{}}
	var earlier []Kind
	for i, k := range c.kinds {
		if name := k.Descriptor().Name; slices.Contains(names, name) {
			if err := out.add(k, c.from[i]); err != nil {
				return nil, err
			}
			earlier = append(earlier, c.earlier[name]...)
		}
	}
	return out.keep(earlier)
}

// Kinds returns every kind, in the order given to NewCatalog.
func (c *Catalog) Kinds() []Kind { return c.kinds }

// Kind returns the kind with this wire name.
func (c *Catalog) Kind(name string) (Kind, bool) {
	k, ok := c.byName[name]
	return k, ok
}

// ByTool returns the kind whose raise tool has this name.
func (c *Catalog) ByTool(tool string) (Kind, bool) {
	k, ok := c.byTool[tool]
	return k, ok
}

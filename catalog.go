package kindkit

import "fmt"

// Catalog is the set of kinds a server hosts, looked up by wire name, raise
// tool name or capability.
type Catalog struct {
	kinds  []Kind
	byName map[string]Kind
	byTool map[string]Kind
}

// NewCatalog checks that no two kinds share a name or a tool name.
func NewCatalog(kinds ...Kind) (*Catalog, error) {
	c := &Catalog{byName: map[string]Kind{}, byTool: map[string]Kind{}}
	for _, k := range kinds {
		d := k.Descriptor()
		if _, dup := c.byName[d.Name]; dup {
			return nil, fmt.Errorf("catalog: two kinds named %q", d.Name)
		}
		if _, dup := c.byTool[d.ToolName]; dup && d.ToolName != "" {
			return nil, fmt.Errorf("catalog: two kinds with tool %q", d.ToolName)
		}
		c.kinds = append(c.kinds, k)
		c.byName[d.Name] = k
		if d.ToolName != "" { // "": only host code asks it
			c.byTool[d.ToolName] = k
		}
	}
	return c, nil
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

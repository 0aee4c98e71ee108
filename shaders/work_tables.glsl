// The cull pass's work tables as the passes that read them take them (skin.comp, triangles.comp;
// common.glsl: WorkGroup, TABLE_*): the includer declares work_groups[] and counters.

// This workgroup's entry of work table `table`, or false when it lies past the table's end. The
// dispatch's rows are full but for the last, so x is a full row's width whenever there are two;
// the last row's workgroups past the table start and leave at once.
bool work_entry(uint table, out WorkGroup work) {
    uint entry = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (entry >= counters.tables[table].x) {
        return false;
    }
    work = work_groups[counters.tables[table].z + entry];
    return true;
}

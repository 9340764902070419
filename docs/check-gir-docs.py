#!/usr/bin/env python3
# check-gir-docs.py: fails when anything public in the GIR has no
# documentation: classes, records and their fields, enums and their
# members, functions, methods, constructors, virtual functions (with
# their parameters and return values), properties and signals.
#
# gi-docgen's own `check` skips virtual functions and fields, which is how
# the reference came to show "No description available" for every vfunc.
#
# usage: check-gir-docs.py GIR KNOWN-GAPS [STAMP]
#
# KNOWN-GAPS lists, one a line, symbols known to lack documentation (as
# this script prints them, without the file position). The list may only
# shrink: a symbol in it that is now documented is an error too, so the
# list never hides a regression.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import sys
import xml.etree.ElementTree as ET

CORE = '{http://www.gtk.org/introspection/core/1.0}'
GLIB = '{http://www.gtk.org/introspection/glib/1.0}'

CALLABLES = ('function', 'method', 'constructor', 'virtual-method', 'callback')


def has_doc(element):
    doc = element.find(CORE + 'doc')
    return doc is not None and doc.text is not None and doc.text.strip() != ''


def where(element):
    pos = element.find(CORE + 'source-position')
    if pos is None:
        return ''
    return '%s:%s: ' % (pos.get('filename'), pos.get('line'))


def key(line):
    """The symbol part of a report line, without the file position."""
    if line.startswith('include/') or line.startswith('core/'):
        return line.split(': ', 1)[1]
    return line


def check_callable(path, element, missing, signal=False):
    name = path + '.' + element.get('name') if not signal else path + '::' + element.get('name')
    if not has_doc(element):
        missing.append(where(element) + name)
    params = element.find(CORE + 'parameters')
    if params is not None:
        for param in params:
            if param.tag == CORE + 'instance-parameter' and signal:
                continue
            if param.tag in (CORE + 'parameter', CORE + 'instance-parameter'):
                if param.get('name') == '...':
                    continue
                if not has_doc(param):
                    missing.append('%s%s: parameter %s' % (where(element), name, param.get('name')))
    retval = element.find(CORE + 'return-value')
    if retval is not None:
        rtype = retval.find(CORE + 'type')
        if (rtype is None or rtype.get('name') != 'none') and not has_doc(retval):
            missing.append('%s%s: return value' % (where(element), name))


def check_container(ns, element, missing):
    path = ns + '.' + element.get('name')
    if not has_doc(element):
        missing.append(where(element) + path)
    for child in element:
        tag = child.tag[len(CORE):] if child.tag.startswith(CORE) else None
        if tag in CALLABLES:
            if child.get('introspectable') == '0' and tag != 'virtual-method':
                continue
            check_callable(path, child, missing)
        elif tag == 'property':
            if not has_doc(child):
                missing.append('%s%s:%s (property)' % (where(element), path, child.get('name')))
        elif child.tag == GLIB + 'signal':
            check_callable(path, child, missing, signal=True)
        elif tag == 'member':
            if not has_doc(child):
                missing.append('%s%s.%s (member)' % (where(element), path, child.get('name')))
        elif tag == 'field':
            # Private members, the parent instance or class (which the
            # G_DECLARE_* macros write), and function pointers (documented
            # as virtual methods: the GIR drops their member comments).
            if child.get('private') == '1' or child.get('name') in ('parent_instance', 'parent_class'):
                continue
            if child.find(CORE + 'callback') is not None:
                continue
            if not has_doc(child):
                missing.append('%s%s.%s (field)' % (where(element), path, child.get('name')))


def main():
    tree = ET.parse(sys.argv[1])
    namespace = tree.getroot().find(CORE + 'namespace')
    ns = namespace.get('name')
    missing = []
    for element in namespace:
        tag = element.tag[len(CORE):] if element.tag.startswith(CORE) else None
        if tag == 'record' and element.get(GLIB + 'is-gtype-struct-for') is not None:
            # A class structure: its class's page documents it; check its
            # public data members only.
            for field in element.findall(CORE + 'field'):
                if (field.get('private') == '1' or field.get('name') == 'parent_class' or
                        field.find(CORE + 'callback') is not None):
                    continue
                if not has_doc(field):
                    missing.append('%s%s.%s.%s (field)' % (where(element), ns, element.get('name'),
                                                           field.get('name')))
        elif tag in ('class', 'interface', 'record', 'enumeration', 'bitfield', 'union'):
            check_container(ns, element, missing)
        elif tag in ('function', 'callback'):
            check_callable(ns, element, missing)
        elif tag in ('constant', 'alias'):
            if not has_doc(element):
                missing.append(where(element) + ns + '.' + element.get('name'))
    known = set()
    with open(sys.argv[2]) as gaps:
        for line in gaps:
            line = line.strip()
            if line and not line.startswith('#'):
                known.add(line)
    failed = False
    seen = set()
    for line in missing:
        seen.add(key(line))
        if key(line) in known:
            continue
        print('%s not documented' % line, file=sys.stderr)
        failed = True
    for gap in sorted(known - seen):
        print('%s: %s is documented now: remove it from the list' % (sys.argv[2], gap), file=sys.stderr)
        failed = True
    if failed:
        print('%s: every public symbol, virtual function, property and field needs a '
              'gi-docgen comment' % sys.argv[1], file=sys.stderr)
        return 1
    if len(sys.argv) > 3:
        with open(sys.argv[3], 'w') as stamp:
            stamp.write('ok\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())

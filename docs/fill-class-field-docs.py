#!/usr/bin/env python3
# fill-class-field-docs.py IN-GIR OUT-GIR: the GIR the reference is built
# from, with a description for the members of the class structures that
# g-ir-scanner leaves without one.
#
# g-ir-scanner (1.74) writes no <doc> for a function pointer member of a
# structure, whatever its comment says, and gi-docgen then shows "No
# description available" for each virtual function of a class structure;
# the parent_class member, which G_DECLARE_DERIVABLE_TYPE's users do not
# document, gets the same words. Each such virtual function field gets the
# first paragraph of its virtual method's documentation (which
# check-gir-docs.py requires), or of the function that calls a class
# method, and a link to it; parent_class says what it is. The typelib is built from the scanner's GIR, untouched.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import sys
import xml.etree.ElementTree as ET

CORE_URI = 'http://www.gtk.org/introspection/core/1.0'
C_URI = 'http://www.gtk.org/introspection/c/1.0'
GLIB_URI = 'http://www.gtk.org/introspection/glib/1.0'
CORE = '{%s}' % CORE_URI
GLIB = '{%s}' % GLIB_URI
XML_SPACE = '{http://www.w3.org/XML/1998/namespace}space'


def doc_text(element):
    doc = element.find(CORE + 'doc')
    if doc is None or doc.text is None or doc.text.strip() == '':
        return None
    return doc.text.strip()


def add_doc(field, text, where):
    """@where: an element whose <doc> or <source-position> gives the
    filename and line gi-docgen wants."""
    pos = where.find(CORE + 'doc')
    if pos is None or pos.get('filename') is None:
        pos = where.find(CORE + 'source-position')
    doc = ET.Element(CORE + 'doc', {XML_SPACE: 'preserve', 'filename': pos.get('filename'),
                                    'line': pos.get('line')})
    doc.text = text
    doc.tail = field.text
    field.insert(0, doc)


def main():
    ET.register_namespace('', CORE_URI)
    ET.register_namespace('c', C_URI)
    ET.register_namespace('glib', GLIB_URI)
    tree = ET.parse(sys.argv[1])
    namespace = tree.getroot().find(CORE + 'namespace')
    ns = namespace.get('name')
    classes = {element.get('name'): element for element in namespace
               if element.tag == CORE + 'class'}
    for record in namespace.findall(CORE + 'record'):
        owner = classes.get(record.get(GLIB + 'is-gtype-struct-for'))
        if owner is None:
            continue
        for field in record.findall(CORE + 'field'):
            if field.get('private') == '1' or doc_text(field) is not None:
                continue
            name = field.get('name')
            if name == 'parent_class':
                add_doc(field, 'The parent class.', record)
            elif field.find(CORE + 'callback') is not None:
                # Its virtual method, or for a class method (no instance)
                # the function that calls it.
                for tag, kind in (('virtual-method', 'vfunc'), ('function', 'func')):
                    target = next((v for v in owner.findall(CORE + tag) if v.get('name') == name), None)
                    text = doc_text(target) if target is not None else None
                    if text is not None:
                        add_doc(field, '%s\n\nSee [%s@%s.%s.%s].' % (text.split('\n\n')[0], kind, ns,
                                                                      owner.get('name'), name),
                                target)
                        break
    tree.write(sys.argv[2], encoding='UTF-8', xml_declaration=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())

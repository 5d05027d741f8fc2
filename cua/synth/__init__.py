"""Task synthesis (issue 38): templates composed from an app's schema, admitted into a
suite only when judge QA (`cua.qa.check`) finds nothing wrong with them."""

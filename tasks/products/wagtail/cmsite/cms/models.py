# mypy: disable-error-code="import-not-found,import-untyped,misc,untyped-decorator"
# (the line above: this module runs under the Wagtail venv, whose libraries the main venv lacks)
"""The Harbourlight site's page types and snippets: a home page, a blog (index and posts
with StreamField bodies, tags, authors, dates), events, a contact form."""

from django.db import models
from modelcluster.contrib.taggit import ClusterTaggableManager
from modelcluster.fields import ParentalKey, ParentalManyToManyField
from taggit.models import TaggedItemBase
from wagtail import blocks
from wagtail.admin.panels import FieldPanel, FieldRowPanel, InlinePanel, MultiFieldPanel
from wagtail.contrib.forms.models import AbstractEmailForm, AbstractFormField
from wagtail.contrib.forms.panels import FormSubmissionsPanel
from wagtail.documents.blocks import DocumentChooserBlock
from wagtail.fields import RichTextField, StreamField
from wagtail.images.blocks import ImageChooserBlock
from wagtail.models import Page
from wagtail.search import index
from wagtail.snippets.models import register_snippet


@register_snippet
class Author(models.Model):
    name = models.CharField(max_length=100)
    role = models.CharField(max_length=100, blank=True)
    bio = models.TextField(blank=True)
    panels = [FieldPanel("name"), FieldPanel("role"), FieldPanel("bio")]

    def __str__(self) -> str:
        return str(self.name)

    class Meta:
        ordering = ["name"]


@register_snippet
class BlogCategory(models.Model):
    name = models.CharField(max_length=80)
    slug = models.SlugField(max_length=80, unique=True)
    panels = [FieldPanel("name"), FieldPanel("slug")]

    def __str__(self) -> str:
        return str(self.name)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "blog categories"


class HomePage(Page):
    intro = RichTextField(blank=True)
    content_panels = [*Page.content_panels, FieldPanel("intro")]


class BlogIndexPage(Page):
    intro = RichTextField(blank=True)
    content_panels = [*Page.content_panels, FieldPanel("intro")]
    subpage_types = ["cms.BlogPage"]


class BlogPageTag(TaggedItemBase):
    content_object = ParentalKey("cms.BlogPage", related_name="tagged_items", on_delete=models.CASCADE)


class BlogPage(Page):
    date = models.DateField("Post date")
    intro = models.CharField(max_length=250, blank=True)
    body = StreamField([
        ("heading", blocks.CharBlock(form_classname="title")),
        ("paragraph", blocks.RichTextBlock()),
        ("quote", blocks.BlockQuoteBlock()),
        ("image", ImageChooserBlock()),
        ("document", DocumentChooserBlock()),
    ], blank=True)
    tags = ClusterTaggableManager(through=BlogPageTag, blank=True)
    authors = ParentalManyToManyField("cms.Author", blank=True)
    categories = ParentalManyToManyField("cms.BlogCategory", blank=True)
    search_fields = [*Page.search_fields, index.SearchField("intro"), index.SearchField("body")]
    content_panels = [
        *Page.content_panels,
        MultiFieldPanel([FieldPanel("date"), FieldPanel("authors"), FieldPanel("categories"), FieldPanel("tags")],
                        heading="Post information"),
        FieldPanel("intro"),
        FieldPanel("body"),
    ]
    parent_page_types = ["cms.BlogIndexPage"]
    subpage_types: list[str] = []


class EventIndexPage(Page):
    intro = RichTextField(blank=True)
    content_panels = [*Page.content_panels, FieldPanel("intro")]
    subpage_types = ["cms.EventPage"]


class EventPage(Page):
    start = models.DateTimeField("Starts at")
    venue = models.CharField(max_length=200)
    description = RichTextField(blank=True)
    content_panels = [*Page.content_panels, FieldPanel("start"), FieldPanel("venue"), FieldPanel("description")]
    parent_page_types = ["cms.EventIndexPage"]
    subpage_types: list[str] = []


class FormField(AbstractFormField):
    page = ParentalKey("cms.FormPage", on_delete=models.CASCADE, related_name="form_fields")


class FormPage(AbstractEmailForm):
    intro = RichTextField(blank=True)
    thank_you_text = RichTextField(blank=True)
    content_panels = [
        *AbstractEmailForm.content_panels,
        FormSubmissionsPanel(),
        FieldPanel("intro"),
        InlinePanel("form_fields", label="Form fields"),
        FieldPanel("thank_you_text"),
        MultiFieldPanel([FieldRowPanel([FieldPanel("from_address"), FieldPanel("to_address")]),
                         FieldPanel("subject")], heading="Email"),
    ]

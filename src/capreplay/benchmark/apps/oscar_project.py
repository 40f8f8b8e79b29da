"""The small Django project that runs the flag shop on django-oscar: its files as text, written into the work folder.

Settings follow Oscar's "Building your own shop" page (SQLite, Oscar's apps and context processors, the basket
middleware, flatpages) with these choices: Haystack's Whoosh backend (pure Python, an index on disk) rather than
the simple backend, which ignores "sort by"; anonymous checkout on, so the checkout starts without an account;
no debug, the static files and the flag images (and their thumbnails, all made at build time) served by
WhiteNoise; product images under a folder without dates. The ``flagshop`` app holds the import command, and its
``oscar/base.html`` is Oscar's own with two lines changed (:func:`offline_base_template`).
"""

from __future__ import annotations

from capreplay.errors import CapreplayError

SETTINGS = '''"""The flag shop's settings (written by capreplay's benchmark builder)."""
import os
from pathlib import Path

from oscar.defaults import *  # noqa: F403

BASE_DIR = Path(__file__).resolve().parent
SECRET_KEY = "capreplay-benchmark-flag-shop"  # a local, offline shop with no accounts
DEBUG = False
ALLOWED_HOSTS = ["shop.bench.test", "127.0.0.1", "localhost"]
ROOT_URLCONF = "urls"
WSGI_APPLICATION = "wsgi.application"
SITE_ID = 1

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.sites",
    "django.contrib.flatpages",
    "oscar.config.Shop",
    "oscar.apps.analytics.apps.AnalyticsConfig",
    "oscar.apps.checkout.apps.CheckoutConfig",
    "oscar.apps.address.apps.AddressConfig",
    "oscar.apps.shipping.apps.ShippingConfig",
    "oscar.apps.catalogue.apps.CatalogueConfig",
    "oscar.apps.catalogue.reviews.apps.CatalogueReviewsConfig",
    "oscar.apps.communication.apps.CommunicationConfig",
    "oscar.apps.partner.apps.PartnerConfig",
    "oscar.apps.basket.apps.BasketConfig",
    "oscar.apps.payment.apps.PaymentConfig",
    "oscar.apps.offer.apps.OfferConfig",
    "oscar.apps.order.apps.OrderConfig",
    "oscar.apps.customer.apps.CustomerConfig",
    "oscar.apps.search.apps.SearchConfig",
    "oscar.apps.voucher.apps.VoucherConfig",
    "oscar.apps.wishlists.apps.WishlistsConfig",
    "oscar.apps.dashboard.apps.DashboardConfig",
    "oscar.apps.dashboard.reports.apps.ReportsDashboardConfig",
    "oscar.apps.dashboard.users.apps.UsersDashboardConfig",
    "oscar.apps.dashboard.orders.apps.OrdersDashboardConfig",
    "oscar.apps.dashboard.catalogue.apps.CatalogueDashboardConfig",
    "oscar.apps.dashboard.offers.apps.OffersDashboardConfig",
    "oscar.apps.dashboard.partners.apps.PartnersDashboardConfig",
    "oscar.apps.dashboard.pages.apps.PagesDashboardConfig",
    "oscar.apps.dashboard.ranges.apps.RangesDashboardConfig",
    "oscar.apps.dashboard.reviews.apps.ReviewsDashboardConfig",
    "oscar.apps.dashboard.vouchers.apps.VouchersDashboardConfig",
    "oscar.apps.dashboard.communications.apps.CommunicationsDashboardConfig",
    "oscar.apps.dashboard.shipping.apps.ShippingDashboardConfig",
    "widget_tweaks",
    "haystack",
    "treebeard",
    "sorl.thumbnail",
    "django_tables2",
    "flagshop",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "oscar.apps.basket.middleware.BasketMiddleware",
    "django.contrib.flatpages.middleware.FlatpageFallbackMiddleware",
]

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.template.context_processors.i18n",
                "django.contrib.messages.context_processors.messages",
                "oscar.apps.search.context_processors.search_form",
                "oscar.apps.checkout.context_processors.checkout",
                "oscar.apps.communication.notifications.context_processors.notifications",
                "oscar.core.context_processors.metadata",
            ],
        },
    },
]

AUTHENTICATION_BACKENDS = (
    "oscar.apps.customer.auth_backends.EmailBackend",
    "django.contrib.auth.backends.ModelBackend",
)

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ["FLAGSHOP_DATA"] + "/db.sqlite3",
        "ATOMIC_REQUESTS": True,
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"

HAYSTACK_CONNECTIONS = {
    "default": {
        "ENGINE": "haystack.backends.whoosh_backend.WhooshEngine",
        "PATH": os.environ["FLAGSHOP_DATA"] + "/whoosh_index",
    },
}

LANGUAGE_CODE = "en-gb"
LANGUAGES = [("en-gb", "English")]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = os.environ["FLAGSHOP_DATA"] + "/static"
MEDIA_URL = "/media/"
MEDIA_ROOT = os.environ["FLAGSHOP_DATA"] + "/media"
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"

OSCAR_SHOP_NAME = "Flag Shop"
OSCAR_SHOP_TAGLINE = "The flag of every ISO 3166 country"
OSCAR_ALLOW_ANON_CHECKOUT = True
OSCAR_IMAGE_FOLDER = "images/products/"
OSCAR_GOOGLE_ANALYTICS_ID = None
OSCAR_INITIAL_ORDER_STATUS = "Pending"
OSCAR_INITIAL_LINE_STATUS = "Pending"
OSCAR_ORDER_STATUS_PIPELINE = {
    "Pending": ("Being processed", "Cancelled"),
    "Being processed": ("Processed", "Cancelled"),
    "Cancelled": (),
}
'''

URLS = '''"""The flag shop's URLs (written by capreplay's benchmark builder): Oscar's, Django's admin, the flags."""
from django.apps import apps
from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path
from django.views.static import serve

urlpatterns = [
    # WhiteNoise serves the images made at build time; this serves any thumbnail made later
    re_path(r"^media/(?P<path>.*)$", serve, {"document_root": settings.MEDIA_ROOT}),
    path("admin/", admin.site.urls),
    path("", include(apps.get_app_config("oscar").urls[0])),
]
'''

ADMIN_USERNAME = "admin"
ADMIN_PASSWORD = "flagshop-admin"
"""The staff superuser the build makes, to sign in to Django's admin at ``/admin/`` (tasks state both)."""
ADMIN_EMAIL = "admin@shop.bench.test"

ADMIN = '''"""The flag shop's admin: Oscar's ModelAdmins and what the shop's staff add (written by capreplay's builder).

- products: a filter by category (the region), 50 to a page, an action that shows the selected products' stock
  records, and each product's stock records inline, with a link to each one's own page;
- offers and vouchers: "Save as new", to run a month's offer again; a voucher's offers chosen in a select box that
  searches them as one types (``autocomplete_fields``).
"""
from django.contrib import admin
from django.http import HttpResponseRedirect
from django.urls import reverse
from oscar.apps.catalogue.admin import ProductAdmin
from oscar.apps.offer.admin import ConditionalOfferAdmin
from oscar.apps.voucher.admin import VoucherAdmin
from oscar.core.loading import get_model

Product = get_model("catalogue", "Product")
StockRecord = get_model("partner", "StockRecord")
ConditionalOffer = get_model("offer", "ConditionalOffer")
Voucher = get_model("voucher", "Voucher")


class StockRecordInline(admin.TabularInline):
    model = StockRecord
    fields = ("partner", "partner_sku", "price", "num_in_stock")
    extra = 0
    show_change_link = True


@admin.action(description="Show the selected products' stock records")
def show_stock_records(modeladmin, request, queryset):
    ids = ",".join(str(pk) for pk in sorted(queryset.values_list("pk", flat=True)))
    return HttpResponseRedirect(reverse("admin:partner_stockrecord_changelist") + "?product__in=" + ids)


class FlagAdmin(ProductAdmin):
    list_filter = [*ProductAdmin.list_filter, "categories"]
    list_per_page = 50
    actions = [show_stock_records]
    inlines = [*ProductAdmin.inlines, StockRecordInline]


class RegionOfferAdmin(ConditionalOfferAdmin):
    save_as = True


class RegionVoucherAdmin(VoucherAdmin):
    save_as = True
    autocomplete_fields = ("offers",)


for model, model_admin in ((Product, FlagAdmin), (ConditionalOffer, RegionOfferAdmin), (Voucher, RegionVoucherAdmin)):
    admin.site.unregister(model)
    admin.site.register(model, model_admin)
'''

OFFERS_COMMAND = '''"""Make the region months' offers and vouchers, and the admin's superuser (written by capreplay)."""
import datetime
import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from oscar.core.loading import get_model

Category = get_model("catalogue", "Category")
Range = get_model("offer", "Range")
Condition = get_model("offer", "Condition")
Benefit = get_model("offer", "Benefit")
ConditionalOffer = get_model("offer", "ConditionalOffer")
Voucher = get_model("voucher", "Voucher")


class Command(BaseCommand):
    help = "Make a voucher offer for each region's month from a JSON file, and the admin's superuser"

    def add_arguments(self, parser):
        parser.add_argument("months")
        parser.add_argument("username")
        parser.add_argument("email")
        parser.add_argument("password")

    @transaction.atomic
    def handle(self, months, username, email, password, **options):
        get_user_model().objects.create_superuser(username, email, password)
        rows = json.loads(Path(months).read_text(encoding="utf-8"))
        for row in rows:
            category = Category.objects.get(name=row["region"], depth=1)
            product_range = Range.objects.create(name=row["range_name"], is_public=False)
            product_range.included_categories.add(category)
            condition = Condition.objects.create(range=product_range, type=Condition.COUNT, value=1)
            benefit = Benefit.objects.create(range=product_range, type=Benefit.PERCENTAGE, value=row["percentage"])
            start = datetime.datetime.fromisoformat(row["start"])
            end = datetime.datetime.fromisoformat(row["end"])
            offer = ConditionalOffer.objects.create(name=row["offer_name"], offer_type=ConditionalOffer.VOUCHER,
                                                    condition=condition, benefit=benefit, start_datetime=start,
                                                    end_datetime=end)
            voucher = Voucher.objects.create(name=row["offer_name"], code=row["voucher_code"],
                                             usage=Voucher.MULTI_USE, start_datetime=start, end_datetime=end)
            voucher.offers.add(offer)
        self.stdout.write(f"made {len(rows)} region months and the user {username}")
'''

WSGI = '''"""The flag shop's WSGI application, with WhiteNoise serving the flags (written by capreplay's builder)."""
import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application
from whitenoise import WhiteNoise

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
application = WhiteNoise(get_wsgi_application())
application.add_files(settings.MEDIA_ROOT, prefix=settings.MEDIA_URL)
'''

MANAGE = '''"""Django's command line for the flag shop (written by capreplay's benchmark builder)."""
import os
import sys

from django.core.management import execute_from_command_line

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
execute_from_command_line(sys.argv)
'''

IMPORT_COMMAND = '''"""Fill the shop with the product records made from the packaged data (written by capreplay)."""
import datetime
import json
from decimal import Decimal
from pathlib import Path

import cairosvg
from django.contrib.sites.models import Site
from django.core.files.base import ContentFile
from django.core.management.base import BaseCommand
from django.db import transaction
from oscar.apps.catalogue.categories import create_from_breadcrumbs
from oscar.core.loading import get_model
from oscar.core.thumbnails import get_thumbnailer

Product = get_model("catalogue", "Product")
ProductClass = get_model("catalogue", "ProductClass")
ProductAttribute = get_model("catalogue", "ProductAttribute")
ProductCategory = get_model("catalogue", "ProductCategory")
ProductImage = get_model("catalogue", "ProductImage")
Category = get_model("catalogue", "Category")
Partner = get_model("partner", "Partner")
StockRecord = get_model("partner", "StockRecord")

ATTRIBUTES = [  # code, name, type, required
    ("alpha_2", "ISO 3166-1 alpha-2", "text", True),
    ("alpha_3", "ISO 3166-1 alpha-3", "text", True),
    ("numeric", "ISO 3166-1 numeric", "text", True),
    ("iso_name", "ISO 3166-1 name", "text", True),
    ("official_name", "Official name", "text", False),
    ("time_zone", "First time zone (tzdata)", "text", False),
    ("subdivisions", "ISO 3166-2 subdivisions", "integer", True),
]
THUMBNAILS = [  # the sizes Oscar's catalogue, basket and checkout templates ask for
    ("x155", {"upscale": False}),
    ("440x400", {"upscale": False}),
    ("100x100", {"upscale": False}),
    ("200x200", {"upscale": False}),
    ("65x55", {"crop": "center"}),
]
CREATED = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
"""Products are dated one minute apart from here in alpha-2 order, so "Newest" sorts by code, Z to A."""


class Command(BaseCommand):
    help = "Import the flag products from a JSON file of records and the flag-icons SVG folder"

    def add_arguments(self, parser):
        parser.add_argument("records")
        parser.add_argument("flags")
        parser.add_argument("host")
        parser.add_argument("categories")

    @transaction.atomic
    def handle(self, records, flags, host, categories, **options):
        Site.objects.update_or_create(pk=1, defaults={"domain": host, "name": "Flag Shop"})
        flag_class = ProductClass.objects.create(name="Flag", requires_shipping=True, track_stock=True)
        for code, name, kind, required in ATTRIBUTES:
            ProductAttribute.objects.create(product_class=flag_class, code=code, name=name, type=kind,
                                            required=required)
        partner = Partner.objects.create(name="flag-icons")
        thumbnailer = get_thumbnailer()
        rows = json.loads(Path(records).read_text(encoding="utf-8"))
        described = json.loads(Path(categories).read_text(encoding="utf-8"))
        category = {}
        for name in sorted({row["category"] for row in rows}):
            category[name] = create_from_breadcrumbs(name)
            category[name].description = described[name]
            category[name].save()
        for index, row in enumerate(rows):
            product = Product(product_class=flag_class, title=row["title"], upc=row["upc"],
                              description=row["description"], structure=Product.STANDALONE)
            for code, value in row["attributes"].items():
                if value is not None:
                    setattr(product.attr, code, value)
            product.save()
            ProductCategory.objects.create(product=product, category=category[row["category"]])
            StockRecord.objects.create(product=product, partner=partner, partner_sku=row["sku"],
                                       price_currency="GBP", price=Decimal(row["price"]),
                                       num_in_stock=row["stock"])
            png = cairosvg.svg2png(url=str(Path(flags) / "4x3" / (row["flag"] + ".svg")), output_width=640,
                                   output_height=480)
            image = ProductImage(product=product, caption=f"Flag of {row['title']}", display_order=0)
            image.original.save(f"{row['flag']}.png", ContentFile(png), save=False)
            image.save()
            for size, options in THUMBNAILS:  # made now, so that no page waits for them (or races to make them)
                thumbnailer.generate_thumbnail(image.original, size=size, **options)
            stamp = CREATED + datetime.timedelta(minutes=index)
            Product.objects.filter(pk=product.pk).update(date_created=stamp, date_updated=stamp)
        self.stdout.write(f"imported {len(rows)} flags")
'''

_BASE_CDN = (
    """            <script src="https://ajax.googleapis.com/ajax/libs/jquery/3.7.1/jquery.min.js"></script>\n"""
    '''            <script>window.jQuery || document.write('<script src="'''
    """{% static "oscar/js/jquery/jquery.min.js" %}"><\\/script>')</script>\n"""
)
_BASE_LOCAL = """            <script src="{% static "oscar/js/jquery/jquery.min.js" %}"></script>
"""
_BASE_CREATED = """        <meta name="created" content="{% now "jS M Y h:i" %}" />
"""


def offline_base_template(original: str) -> str:
    """Oscar's ``oscar/base.html`` with jQuery from Oscar's own static files instead of Google's CDN, and without
    the ``created`` meta tag (the time the page was rendered, which would differ between two builds)."""
    for line in (_BASE_CDN, _BASE_CREATED):
        if line not in original:
            raise CapreplayError("Oscar's base.html no longer has the lines the flag shop replaces; check the pin")
    return original.replace(_BASE_CDN, _BASE_LOCAL).replace(_BASE_CREATED, "")
